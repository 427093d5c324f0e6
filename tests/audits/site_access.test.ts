/**
 * Staging access and politeness through the API: an audit started with `auth` crawls a site that
 * answers 401 without it; the credentials are shown masked, kept only sealed (never in plain text
 * in the KV file or its values, at any point of the crawl), never logged, and deleted by the
 * commit that ends the audit, completed or failed; bad credentials answer 400 naming the field and
 * a server without an encryption key 503, nothing charged; a schedule keeps its own sealed copy,
 * copies it into each run and deletes it with itself; `max_rps` and the politeness report.
 */
import assert from "node:assert/strict";
import { createProject } from "../../domain/projects/projects.ts";
import { canonicalJson, sha256Hex } from "../../domain/platform/replay_seal.ts";
import type { ScheduleRecord } from "../../domain/monitoring/schedules.ts";
import { keys } from "../../kv/keys.ts";
import { errorCode, subscribeProject, type TestApp, withApp } from "../helpers/app.ts";
import { balanceOf, liveWithCredits } from "../helpers/credits.ts";
import { tickUntilSchedule, waitForAudit } from "../helpers/jobs.ts";
import { openTestKv } from "../helpers/kv.ts";
import { htmlAnswer, type LoggedSite, serveLogged } from "../helpers/logged_site.ts";
import { page } from "../helpers/sites.ts";
import { call, callError, connectMcp } from "../mcp/helpers.ts";

const USER = "reviewer";
const PASSWORD = "Pw-7c1f0e3b-staging-secret";
const BASIC = `Basic ${btoa(`${USER}:${PASSWORD}`)}`;
/** What must never appear in plain text: the password, the header value it becomes. */
const SECRETS = [PASSWORD, btoa(`${USER}:${PASSWORD}`)];

/** A staging site behind Basic auth: 401 without it. `onPage` runs on each page served. */
function stagingSite(onPage: () => void = () => {}): LoggedSite {
  const guarded = (body: () => Response) => (req: Request) => {
    if (req.headers.get("authorization") !== BASIC) {
      return new Response("login required", {
        status: 401,
        headers: { "www-authenticate": 'Basic realm="staging"' },
      });
    }
    onPage();
    return body();
  };
  return serveLogged(() => ({
    "/": guarded(() => htmlAnswer(page({ title: "Staging home", links: ["/a", "/b", "/c"] }))),
    "/a": guarded(() => htmlAnswer(page({ key: "a" }))),
    "/b": guarded(() => htmlAnswer(page({ key: "b" }))),
    "/c": guarded(() => htmlAnswer(page({ key: "c" }))),
  }));
}

/** Every secret found in the KV file (and its WAL) as bytes, and in every value as JSON. */
async function secretsAtRest(kv: Deno.Kv, file: string): Promise<string[]> {
  const found = new Set<string>();
  for (const f of [file, `${file}-wal`]) {
    let bytes: Uint8Array;
    try {
      bytes = Deno.readFileSync(f);
    } catch {
      continue;
    }
    const text = new TextDecoder("latin1").decode(bytes);
    for (const s of SECRETS) if (text.includes(s)) found.add(`${f}: ${s}`);
  }
  for await (const e of kv.list({ prefix: [] })) {
    const text = JSON.stringify(
      { k: e.key, v: e.value },
      (_, v) => typeof v === "bigint" ? String(v) : v instanceof Uint8Array ? Array.from(v) : v,
    );
    for (const s of SECRETS) if (text.includes(s)) found.add(`${e.key.join("/")}: ${s}`);
  }
  return [...found];
}

/** Collects what the process prints while `fn` runs (and still prints it). */
async function capturingLogs<T>(fn: () => Promise<T>): Promise<{ result: T; logs: string }> {
  const lines: string[] = [];
  const names = ["log", "info", "warn", "error", "debug"] as const;
  const saved = names.map((n) => console[n]);
  names.forEach((n, i) => {
    console[n] = (...args: unknown[]) => {
      lines.push(args.map(String).join(" "));
      saved[i](...args);
    };
  });
  try {
    return { result: await fn(), logs: lines.join("\n") };
  } finally {
    names.forEach((n, i) => (console[n] = saved[i]));
  }
}

async function newProject(app: TestApp, key: string, url: string): Promise<string> {
  const proj = await app.req("POST", "/v1/projects", { key, body: { url } });
  assert.equal(proj.status, 201, proj.text);
  return proj.body.project_id;
}

Deno.test("a staging audit: sent to the site, shown masked, sealed at rest, never logged, gone when it ends", async () => {
  const file = await Deno.makeTempFile({ suffix: ".sqlite" });
  const kv = await openTestKv(file);
  const midCrawl: Promise<string[]>[] = [];
  let appKv: Deno.Kv | null = null;
  // Mid-crawl, each page served looks at the KV file: the credentials are in use right now.
  const site = stagingSite(() => {
    if (appKv) midCrawl.push(secretsAtRest(appKv, file));
  });
  try {
    const { logs } = await capturingLogs(() =>
      withApp(async (app) => {
        appKv = app.kv;
        const { key } = await app.signup();
        const projectId = await newProject(app, key, site.origin);
        const start = await app.req("POST", `/v1/projects/${projectId}/audits`, {
          key,
          headers: { "idempotency-key": "staging-audit-1" },
          body: { auth: { type: "basic", user: USER, password: PASSWORD }, max_rps: 50 },
        });
        assert.equal(start.status, 202, start.text);
        assert.ok(!start.text.includes(PASSWORD));
        const auditId = start.body.audit_id;
        const sealed = (await app.kv.get(keys.auditAuth(auditId))).value;
        assert.ok(sealed, "the sealed copy is there while the audit runs");
        assert.deepEqual(await secretsAtRest(app.kv, file), []);
        // The scan does read what is stored: the user name (shown in the mask) is in the file.
        const stored = new TextDecoder("latin1").decode(Deno.readFileSync(file)) +
          new TextDecoder("latin1").decode(Deno.readFileSync(`${file}-wal`));
        assert.ok(stored.includes(USER));

        const done = await waitForAudit(app, key, auditId);
        assert.equal(done.body.status, "completed", done.text);
        assert.deepEqual(done.body.options, {
          auth: { type: "basic", user: USER, password: "***" },
          max_rps: 50,
          user_agent: "serpwright",
        });
        assert.ok(!done.text.includes(PASSWORD));
        assert.equal(done.body.politeness.max_rps, 50);
        assert.equal(done.body.politeness.slowed, false);
        assert.equal(done.body.politeness.throttled, 0);

        // The site was audited behind its login: every page 200, each request authorised.
        const pages = await app.req("GET", `/v1/audits/${auditId}/pages`, { key });
        const statuses = Object.fromEntries(
          pages.body.data.map((p: { url: string; status: number }) => [p.url, p.status]),
        );
        for (const p of ["/", "/a", "/b", "/c"]) assert.equal(statuses[site.url(p)], 200, p);
        const pageHits = site.log.filter((r) => /^\/[abc]?$/.test(r.path));
        assert.equal(pageHits.length, 4);
        assert.ok(pageHits.every((r) => r.status === 200));

        // The finishing commit deleted the credentials; nothing of them is left anywhere.
        assert.equal((await app.kv.get(keys.auditAuth(auditId))).value, null);
        assert.deepEqual(await secretsAtRest(app.kv, file), []);
        // The idempotency record keeps a keyed digest of the body, not its plain hash (which
        // would let a reader of the store test password guesses offline); a replay still works,
        // also of a record stored before with the plain hash.
        const body = { auth: { type: "basic", user: USER, password: PASSWORD }, max_rps: 50 };
        const plain = await sha256Hex(canonicalJson(body));
        const records = await Array.fromAsync(app.kv.list<{ fingerprint: string }>({
          prefix: ["idempotency"],
        }));
        assert.equal(records.length, 1);
        assert.match(records[0].value.fingerprint, /^v2:[0-9a-f]{64}$/);
        assert.ok(!JSON.stringify(records).includes(plain));
        const replay = () =>
          app.req("POST", `/v1/projects/${projectId}/audits`, {
            key,
            headers: { "idempotency-key": "staging-audit-1" },
            body,
          });
        assert.deepEqual((await replay()).body, start.body);
        await app.kv.set(records[0].key, { ...records[0].value, fingerprint: plain });
        assert.deepEqual((await replay()).body, start.body, "a record from before replays");
        assert.ok(midCrawl.length >= 1, "looked at the store during the crawl");
        assert.deepEqual((await Promise.all(midCrawl)).flat(), [], "not at rest mid-crawl either");
      }, { kv })
    );
    for (const s of SECRETS) assert.ok(!logs.includes(s), "never logged");
  } finally {
    await site.close();
    await Deno.remove(file).catch(() => {});
    await Deno.remove(`${file}-wal`).catch(() => {});
    await Deno.remove(`${file}-shm`).catch(() => {});
  }
});

Deno.test("auth and max_rps: 400 naming the field, nothing charged", () =>
  withApp(async (app) => {
    const { accountId, live } = await liveWithCredits(app, 25);
    const projectId = await newProject(app, live, "http://127.0.0.1:9/");
    const cases: [unknown, RegExp][] = [
      [{ auth: { type: "headers", headers: { "Bad Name": "x" } } }, /^auth\.headers\.Bad Name: /],
      [{ auth: { type: "headers", headers: { Connection: "x" } } }, /^auth\.headers\.Connection: /],
      [{ auth: { type: "headers", headers: { Host: "x" } } }, /cannot be set/],
      [{ auth: { type: "headers", headers: { "X-A": "1", "x-a": "2" } } }, /twice/],
      [{ auth: { type: "headers", headers: { "X-A": "a\r\nB: c" } } }, /visible ASCII/],
      [{ auth: { type: "basic", user: "a:b", password: "p" } }, /^auth\.user: /],
      [{ auth: { type: "basic", user: "a", password: "p", extra: 1 } }, /^auth/],
      [{ auth: { type: "token", token: "x" } }, /^auth/],
      [{ auth: { type: "cookie", cookie: "" } }, /^auth\.cookie: /],
      [{ max_rps: 0 }, /^max_rps: /],
      [{ max_rps: 1000 }, /^max_rps: /],
      [{ auth: { type: "cookie", cookie: "s=1" }, render: true }, /^auth: .*raw audits/],
    ];
    for (const [body, message] of cases) {
      const res = await app.req("POST", `/v1/projects/${projectId}/audits`, { key: live, body });
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(errorCode(res), "invalid_request");
      assert.match(res.body.error.message, message, JSON.stringify(body));
    }
    assert.equal(await balanceOf(app, accountId), 25, "nothing charged");
    assert.equal(
      (await app.req("GET", `/v1/projects/${projectId}`, { key: live })).body
        .counts.audits,
      0,
    );
  }));

Deno.test("without WEBHOOK_ENCRYPTION_KEY an audit with auth is 503 site_auth_not_configured, nothing charged", () =>
  withApp(async (app) => {
    const { accountId, live } = await liveWithCredits(app, 25);
    const projectId = await newProject(app, live, "http://127.0.0.1:9/");
    const res = await app.req("POST", `/v1/projects/${projectId}/audits`, {
      key: live,
      body: { auth: { type: "cookie", cookie: "session=1" } },
    });
    assert.equal(res.status, 503, res.text);
    assert.equal(errorCode(res), "site_auth_not_configured");
    assert.equal(await balanceOf(app, accountId), 25);
    // A foreign project is still the 404 it always is, before any of that.
    const other = await app.req("POST", "/v1/projects/proj_nope/audits", {
      key: live,
      body: { auth: { type: "cookie", cookie: "session=1" } },
    });
    assert.equal(other.status, 404);
  }, { env: { WEBHOOK_ENCRYPTION_KEY: "" } }));

Deno.test("a failed audit's credentials go in its failing commit (a target the guard refuses)", () =>
  withApp(async (app) => {
    const deps = app.service.services.deps;
    const { accountId, live } = await liveWithCredits(app, 50);
    const body = { auth: { type: "basic", user: USER, password: PASSWORD } };

    // A site the address guard refuses: the first step fails the audit (refunded).
    const refused = await createProject(
      { ...deps, config: { ...deps.config, allowPrivateTargets: true } },
      { accountId, mode: "live" },
      { url: "http://127.0.0.1:9/" },
    );
    const first = await app.req("POST", `/v1/projects/${refused.id}/audits`, { key: live, body });
    assert.equal(first.status, 202, first.text);
    const failed = await waitForAudit(app, live, first.body.audit_id);
    assert.equal(failed.body.error.code, "target_refused");
    assert.equal((await app.kv.get(keys.auditAuth(first.body.audit_id))).value, null);
    assert.deepEqual(failed.body.options.auth, { type: "basic", user: USER, password: "***" });
    assert.equal(await balanceOf(app, accountId), 50, "refunded");
  }, { env: { ALLOW_PRIVATE_TARGETS: "0" } }));

Deno.test("credentials that no longer open (the operator key changed) fail the audit, refunded, and go", async () => {
  const site = stagingSite();
  try {
    await withApp(async (app) => {
      const { accountId, live } = await liveWithCredits(app, 25);
      const projectId = await newProject(app, live, site.origin);
      const res = await app.req("POST", `/v1/projects/${projectId}/audits`, {
        key: live,
        body: { auth: { type: "basic", user: USER, password: PASSWORD } },
      });
      assert.equal(res.status, 202);
      // The operator replaces the key: the next step cannot open the sealed copy.
      app.service.services.deps.config.webhookEncryptionKey = new Uint8Array(32).fill(9);
      const done = await waitForAudit(app, live, res.body.audit_id);
      assert.equal(done.body.status, "failed", done.text);
      assert.equal(done.body.error.code, "auth_unavailable");
      assert.equal((await app.kv.get(keys.auditAuth(res.body.audit_id))).value, null);
      assert.equal(await balanceOf(app, accountId), 25, "refunded");
    }, { env: { CRAWL_STEP_PAGES: "1" } });
  } finally {
    await site.close();
  }
});

Deno.test("a schedule keeps its own sealed copy, copies it into each run, and deletes it with itself", async () => {
  const site = stagingSite();
  try {
    await withApp(async (app) => {
      const { accountId } = await app.signup();
      const key = await app.liveKey(accountId);
      const projectId = await newProject(app, key, site.origin);
      await subscribeProject(app, accountId, projectId, "basic");
      const put = await app.req("PUT", `/v1/projects/${projectId}/schedule`, {
        key,
        body: {
          cadence: "weekly",
          hour_utc: 6,
          auth: { type: "basic", user: USER, password: PASSWORD },
          max_rps: 20,
        },
      });
      assert.equal(put.status, 201, put.text);
      assert.deepEqual(put.body.options, {
        user_agent: "serpwright",
        auth: { type: "basic", user: USER, password: "***" },
        max_rps: 20,
      });
      assert.ok(!put.text.includes(PASSWORD));
      const schedule = (await app.kv.get<ScheduleRecord>(keys.schedule(projectId))).value!;
      assert.deepEqual(schedule.auth, { type: "basic", user: USER, password: "***" });
      assert.ok((await app.kv.get(keys.scheduleAuth(projectId))).value);
      assert.deepEqual(await secretsAtRest(app.kv, ":memory:"), []);

      app.clock.set(schedule.nextRunAt!);
      const s = await tickUntilSchedule(app, key, projectId, (s) => s.runs === 1);
      const auditId = s.last_run.audit_id;
      const done = await waitForAudit(app, key, auditId);
      assert.equal(done.body.status, "completed", done.text);
      assert.equal(done.body.trigger, "schedule");
      assert.deepEqual(done.body.options, {
        auth: { type: "basic", user: USER, password: "***" },
        max_rps: 20,
        user_agent: "serpwright",
      });
      assert.ok(site.to("/a").every((r) => r.status === 200) && site.to("/a").length === 1);
      // The run's copy is gone with the run; the schedule's stays for the next runs.
      assert.equal((await app.kv.get(keys.auditAuth(auditId))).value, null);
      assert.ok((await app.kv.get(keys.scheduleAuth(projectId))).value);

      // A PUT without auth removes the schedule's copy; one with it seals a new one.
      const schedulePut = (body: Record<string, unknown>) =>
        app.req("PUT", `/v1/projects/${projectId}/schedule`, {
          key,
          body: { cadence: "weekly", hour_utc: 6, ...body },
        });
      assert.equal((await schedulePut({})).status, 200);
      assert.equal((await app.kv.get(keys.scheduleAuth(projectId))).value, null);
      const cookie = await schedulePut({ auth: { type: "cookie", cookie: `s=${PASSWORD}` } });
      assert.equal(cookie.status, 200, cookie.text);
      assert.deepEqual(cookie.body.options.auth, { type: "cookie", cookie: "***" });
      assert.ok((await app.kv.get(keys.scheduleAuth(projectId))).value);
      const gone = await app.req("DELETE", `/v1/projects/${projectId}/schedule`, { key });
      assert.equal(gone.status, 200, gone.text);
      assert.equal((await app.kv.get(keys.scheduleAuth(projectId))).value, null);
      assert.deepEqual(await secretsAtRest(app.kv, ":memory:"), []);
    });
  } finally {
    await site.close();
  }
});

Deno.test("MCP: the audits tool's start takes auth and max_rps like the REST body; the audit shows them masked", async () => {
  const site = stagingSite();
  try {
    await withApp(async (app) => {
      const { key } = await app.signup();
      const projectId = await newProject(app, key, site.origin);
      const agent = await connectMcp(app, { key });
      try {
        const bad = await callError(agent, "audits", {
          action: "start",
          project_id: projectId,
          auth: { type: "headers", headers: { Host: "x" } },
        });
        assert.equal(bad.code, "invalid_request");
        const started = await call(agent, "audits", {
          action: "start",
          project_id: projectId,
          auth: { type: "basic", user: USER, password: PASSWORD },
          max_rps: 40,
          wait: 30,
        });
        const audit = started;
        assert.equal(audit.status, "completed", JSON.stringify(audit));
        assert.deepEqual(audit.options, {
          auth: { type: "basic", user: USER, password: "***" },
          max_rps: 40,
          user_agent: "serpwright",
        });
        assert.ok(!JSON.stringify(started).includes(PASSWORD));
        assert.ok(site.to("/").every((r) => r.status === 200) && site.to("/").length === 1);
        assert.equal((await app.kv.get(keys.auditAuth(audit.audit_id))).value, null);
      } finally {
        await agent.close();
      }
    });
  } finally {
    await site.close();
  }
});
