/**
 * Audit options over HTTP through the real app (issue 22 §1 and §5): each option enforced on a
 * fixture site that records which paths were fetched and with which User-Agent, validation 400s
 * naming the field, unknown body fields refused, the options echoed by GET, a start with other
 * options than the running audit (409), and the same options through the MCP audits tool.
 */
import assert from "node:assert/strict";
import { z } from "@hono/zod-openapi";
import { defineOperation } from "../../app/operation.ts";
import { OPERATIONS } from "../../app/operations/index.ts";
import { auditOptionsView } from "../../app/views.ts";
import { errorCode, subscribeProject, type TestApp, withApp } from "../helpers/app.ts";
import { pollUntil, quiet, truthy, waitForAudit } from "../helpers/jobs.ts";
import { keys } from "../../kv/keys.ts";
import { startReceiver } from "../webhooks/helpers.ts";
import {
  type FakeSite,
  html,
  isAgentProbe,
  page,
  type Route,
  serveSite,
} from "../helpers/sites.ts";
import { call, callError, connectMcp } from "../mcp/helpers.ts";

/** A site recording each request's path and User-Agent; /slow holds while `hold` is set. */
function recordingSite() {
  const agents: string[] = [];
  let release: () => void = () => {};
  let gate: Promise<void> | null = null;
  let site: FakeSite | null = null;
  const routes = (o: string): Record<string, Route> => ({
    "/": html(page({
      title: "Home of the options site",
      key: "home",
      links: [o + "/docs/a", o + "/blog/b", o + "/private/c"],
    })),
    "/docs/a": html(
      page({ title: "Docs page A of the site", key: "a", links: [o + "/docs/a/deep"] }),
    ),
    "/docs/a/deep": html(page({ title: "Deep docs page of the site", key: "deep" })),
    "/blog/b": html(page({ title: "Blog page B of the site", key: "b" })),
    "/private/c": html(page({ title: "Private page C of the site", key: "c" })),
    "/robots.txt": {
      headers: { "content-type": "text/plain" },
      body: "User-agent: Googlebot\nDisallow: /blog/\n\nUser-agent: *\nAllow: /\n",
    },
  });
  let table: Record<string, Route> | null = null;
  site = serveSite((path) => {
    table ??= routes(site!.origin);
    const r = table[path];
    if (!r) return undefined;
    return {
      handler: async (req) => {
        const ua = req.headers.get("user-agent");
        if (!isAgentProbe(ua)) agents.push(ua ?? "");
        if (path === "/" && gate) await gate;
        return new Response(r.body ?? null, { status: r.status ?? 200, headers: r.headers });
      },
    };
  });
  return {
    site,
    agents,
    hold() {
      gate = new Promise((r) => (release = r));
    },
    release: () => {
      gate = null;
      release();
    },
  };
}

async function subscribed(app: TestApp, url: string) {
  const { accountId } = await app.signup();
  const key = await app.liveKey(accountId);
  const proj = await app.req("POST", "/v1/projects", { key, body: { url } });
  const projectId = proj.body.project_id as string;
  await subscribeProject(app, accountId, projectId, "pro");
  return { key, projectId, path: `/v1/projects/${projectId}/audits` };
}

const pages = (hits: string[]) =>
  [...new Set(hits.filter((h) => !["/robots.txt", "/sitemap.xml", "/llms.txt"].includes(h)))]
    .sort();

Deno.test("exclude, include, max_depth and user_agent are enforced and echoed on GET", () =>
  withApp(async (app) => {
    const r = recordingSite();
    try {
      const { key, path } = await subscribed(app, r.site.origin);
      const res = await app.req("POST", path, {
        key,
        body: {
          include: ["/docs/**", "/blog/**"],
          exclude: ["/docs/*/deep"],
          max_depth: 2,
          user_agent: "googlebot_smartphone",
        },
      });
      assert.equal(res.status, 202, res.text);
      const queued = await app.req("GET", `/v1/audits/${res.body.audit_id}`, { key });
      assert.deepEqual(queued.body.options, {
        include: ["/docs/**", "/blog/**"],
        exclude: ["/docs/*/deep"],
        max_depth: 2,
        user_agent: "googlebot_smartphone",
      });
      assert.equal("scope" in queued.body, false, "scope is reported once completed");
      const done = await waitForAudit(app, key, res.body.audit_id);
      assert.equal(done.body.status, "completed", done.text);
      // /blog/b is disallowed for Googlebot; /private/c is outside include; deep is excluded.
      assert.deepEqual(pages(r.site.hits), ["/", "/docs/a"]);
      assert.ok(r.agents.length > 0 && r.agents.every((a) => /Googlebot\/2\.1/.test(a)));
      assert.ok(r.agents.every((a) => a.includes("SerpwrightBot/1.0")));
      assert.deepEqual(Object.keys(done.body.scope.left_out).sort(), [
        "exclude",
        "include",
        "max_depth",
      ]);
      assert.equal(done.body.scope.left_out.exclude, 1);
      assert.equal(done.body.scope.left_out.include, 1);
      assert.equal(done.body.scope.left_out.max_depth, 0);
      assert.deepEqual(done.body.options, queued.body.options);

      // The page inventory lists what was met in scope, not the excluded URLs.
      const inv = await app.req("GET", `/v1/audits/${res.body.audit_id}/pages`, { key });
      const urls = inv.body.data.map((p: { url: string }) => new URL(p.url).pathname).sort();
      assert.deepEqual(urls, ["/", "/blog/b", "/docs/a"]);
      const blog = inv.body.data.find((p: { url: string }) => p.url.endsWith("/blog/b"));
      assert.equal(blog.fetch_state, "blocked");
      const issues = await app.req("GET", `/v1/audits/${res.body.audit_id}/issues`, { key });
      const fired = issues.body.data.map((i: { check: string }) => i.check);
      assert.ok(!fired.includes("broken_internal_links"));
    } finally {
      await r.site.close();
    }
  }));

Deno.test("list mode over HTTP: exactly the listed URLs; the default options are echoed", () =>
  withApp(async (app) => {
    const r = recordingSite();
    try {
      const { key, path } = await subscribed(app, r.site.origin);
      const plain = await app.req("POST", path, { key });
      const first = await waitForAudit(app, key, plain.body.audit_id);
      assert.deepEqual(first.body.options, { user_agent: "serpwright" });
      assert.equal("scope" in first.body, false);
      assert.ok(r.agents.every((a) => !a.includes("Googlebot")));

      r.site.hits.length = 0;
      const listed = await app.req("POST", path, {
        key,
        // A fragment is not part of the URL: stored canonical.
        body: { urls: [r.site.url("/private/c#top"), r.site.url("/docs/a/deep")] },
      });
      assert.equal(listed.status, 202, listed.text);
      const done = await waitForAudit(app, key, listed.body.audit_id);
      assert.equal(done.body.status, "completed");
      assert.deepEqual(done.body.options.urls, [
        r.site.url("/private/c"),
        r.site.url("/docs/a/deep"),
      ]);
      assert.deepEqual(pages(r.site.hits), ["/docs/a/deep", "/private/c"]);
      assert.equal(done.body.scope.left_out.urls, 0, "the listed pages link nowhere else");
    } finally {
      await r.site.close();
    }
  }));

Deno.test("validation: each bad option is 400 invalid_request naming the field; nothing is created", () =>
  withApp(async (app) => {
    const { key, path, projectId } = await subscribed(app, "https://example.com");
    const bad: [unknown, RegExp][] = [
      [{ include: "/blog/**" }, /^include: /],
      [{ include: ["blog/**"] }, /^include\.0: must start with \//],
      [{ exclude: ["/ok", "/a b"] }, /^exclude\.1: .*whitespace/],
      [{ exclude: Array.from({ length: 21 }, (_, i) => `/p${i}`) }, /^exclude: /],
      [{ exclude: ["/" + "x".repeat(200)] }, /^exclude\.0: must be at most 200 characters/],
      [{ include: ["/" + "*a".repeat(11)] }, /^include\.0: must have at most 10 wildcards/],
      [{ max_depth: -1 }, /^max_depth: /],
      [{ max_depth: 1.5 }, /^max_depth: /],
      [{ max_depth: "3" }, /^max_depth: /],
      [{ urls: [] }, /^urls: /],
      [{ urls: ["https://other.example/x"] }, /^urls\.0: not on the project's site/],
      [{ urls: ["https://example.com/a", "/relative"] }, /^urls\.1: not an absolute URL/],
      [{ urls: ["ftp://example.com/a"] }, /^urls\.0: only http and https/],
      [{ urls: ["https://example.com/a"], max_depth: 1 }, /^urls: .*leave out max_depth/],
      [{ urls: Array.from({ length: 501 }, (_, i) => `https://example.com/${i}`) }, /^urls: /],
      [{ sitemap_only: "yes" }, /^sitemap_only: /],
      [{ user_agent: "curl" }, /^user_agent: /],
    ];
    for (const [body, message] of bad) {
      const res = await app.req("POST", path, { key, body });
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(errorCode(res), "invalid_request");
      assert.match(res.body.error.message, message, JSON.stringify(body));
      // The schedule takes the same options with the same answers.
      const put = await app.req("PUT", `/v1/projects/${projectId}/schedule`, {
        key,
        body: { cadence: "weekly", hour_utc: 3, ...(body as object) },
      });
      assert.equal(put.status, 400, `schedule ${JSON.stringify(body)}: ${put.text}`);
      assert.match(put.body.error.message, message);
    }
    const project = await app.req("GET", `/v1/projects/${projectId}`, { key });
    assert.equal(project.body.counts.audits, 0, "refusals create nothing");
    const schedule = await app.req("GET", `/v1/projects/${projectId}/schedule`, { key });
    assert.equal(schedule.status, 404);
  }));

Deno.test("unknown body fields are refused, naming the field, on the audit POST and other bodies", () =>
  withApp(async (app) => {
    const { key, path } = await subscribed(app, "https://example.com");
    const audit = await app.req("POST", path, { key, body: { exclude_paths: ["/x"] } });
    assert.equal(audit.status, 400, audit.text);
    assert.equal(errorCode(audit), "invalid_request");
    assert.match(audit.body.error.message, /exclude_paths/);
    const project = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://example.org", colour: "blue" },
    });
    assert.equal(project.status, 400);
    assert.match(project.body.error.message, /colour/);
    const keyRes = await app.req("POST", "/v1/api-keys", {
      key,
      body: { name: "x", scope: "all" },
    });
    assert.equal(keyRes.status, 400);
    assert.match(keyRes.body.error.message, /scope/);
    // An empty body and {} still start the plain audit.
    const ok = await app.req("POST", path, { key, body: {} });
    assert.equal(ok.status, 202, ok.text);
  }));

Deno.test("a start with other options while an audit runs is 409 audit_in_progress; the same options adopt it", () =>
  withApp(async (app) => {
    const r = recordingSite();
    r.hold();
    try {
      const { key, path } = await subscribed(app, r.site.origin);
      const opts = { exclude: ["/private/**"], user_agent: "bingbot" };
      const first = await app.req("POST", path, { key, body: opts });
      assert.equal(first.status, 202, first.text);
      const same = await app.req("POST", path, {
        key,
        body: { user_agent: "bingbot", exclude: ["/private/**"] },
      });
      assert.equal(same.status, 202);
      assert.equal(same.body.audit_id, first.body.audit_id, "same options: the running audit");
      for (const other of [{}, { exclude: ["/private/**"] }, { ...opts, max_depth: 3 }]) {
        const res = await app.req("POST", path, { key, body: other });
        assert.equal(res.status, 409, JSON.stringify(other));
        assert.equal(errorCode(res), "audit_in_progress");
        assert.equal(res.body.audit_id, first.body.audit_id);
        assert.equal(res.body.poll, `/v1/audits/${first.body.audit_id}`);
      }
      r.release();
      const done = await waitForAudit(app, key, first.body.audit_id);
      assert.equal(done.body.status, "completed");
      const project = await app.req("GET", path.replace("/audits", ""), { key });
      assert.equal(project.body.counts.audits, 1);
    } finally {
      r.release();
      await r.site.close();
    }
  }));

Deno.test("MCP audits start takes the same options: echoed, enforced, and refused naming the field", () =>
  withApp(async (app) => {
    const r = recordingSite();
    try {
      const { key, projectId } = await subscribed(app, r.site.origin);
      const client = await connectMcp(app, { key });
      try {
        const bad = await callError(client, "audits", {
          action: "start",
          project_id: projectId,
          exclude: ["no-slash"],
        });
        assert.equal(bad.code, "invalid_request");
        assert.match(bad.body.error.message, /^exclude\.0: must start with \//);
        const unknown = await callError(client, "audits", {
          action: "start",
          project_id: projectId,
          exclude_paths: ["/x"],
        });
        assert.equal(unknown.code, "invalid_request");
        assert.match(unknown.body.error.message, /exclude_paths/);

        const started = await call(client, "audits", {
          action: "start",
          project_id: projectId,
          sitemap_only: true,
          user_agent: "googlebot_desktop",
          wait: 30,
        });
        assert.deepEqual(started.options, {
          sitemap_only: true,
          user_agent: "googlebot_desktop",
        });
        const got = await call(client, "audits", {
          action: "get",
          audit_id: started.audit_id,
          wait: 30,
        });
        assert.equal(got.status, "completed");
        assert.deepEqual(got.options, started.options);
        // No sitemap: only the start page is in scope.
        assert.deepEqual(pages(r.site.hits), ["/"]);
        assert.ok(got.scope.left_out.sitemap_only >= 3);
        const rest = await app.req("GET", `/v1/audits/${started.audit_id}`, { key });
        assert.deepEqual(rest.body, got);
      } finally {
        await client.close();
      }
    } finally {
      await r.site.close();
    }
  }));

Deno.test("one rule for every body: each operation's body refuses unknown fields; a loose one cannot be declared", () => {
  const withBody = OPERATIONS.filter((op) => op.body);
  assert.ok(withBody.length >= 9, `${withBody.length} operations with a body`);
  for (const op of withBody) {
    const r = op.body!.safeParse({ zz_unknown_field: 1 });
    assert.equal(r.success, false, op.id);
    const keys = r.error!.issues.flatMap((i) =>
      i.code === "unrecognized_keys" ? (i as { keys: string[] }).keys : []
    );
    assert.deepEqual(keys, ["zz_unknown_field"], op.id);
  }
  assert.throws(
    () =>
      defineOperation({
        ...OPERATIONS[0],
        id: "test.loose",
        body: z.object({ a: z.string().optional() }),
      } as never),
    /must be \.strict\(\)/,
  );
});

Deno.test("the options view names only known fields: nothing else stored reaches a caller", () => {
  assert.deepEqual(auditOptionsView(undefined), { user_agent: "serpwright" });
  const stored = { maxDepth: 0, auth: { type: "basic", user: "staging" }, password: "hunter2" };
  const view = auditOptionsView(stored as never);
  assert.deepEqual(view, { max_depth: 0, user_agent: "serpwright" });
  assert.ok(!JSON.stringify(view).includes("hunter2"));
});

Deno.test("a scoped audit keeps the whole site's facts and is no regression against a whole-site audit", async () => {
  let broken = false;
  const site = serveSite((path) => {
    if (path === "/") {
      return html(
        broken
          ? page({ title: "Watched home page", viewport: null, links: ["/guide", "/gone"] })
          : page({ title: "Watched home page", links: ["/guide"] }),
      );
    }
    if (path === "/guide") return html(page({ title: "A guide page of the watched site" }));
    return undefined; // 404
  });
  const receiver = startReceiver();
  try {
    await withApp(async (app) => {
      const { key, path, projectId } = await subscribed(app, site.origin);
      await app.req("POST", "/v1/webhooks", {
        key,
        body: { url: receiver.url, events: ["audit.regressed", "audit.completed"] },
      });
      const run = async (body: unknown) => {
        const res = await app.req("POST", path, { key, body });
        assert.equal(res.status, 202, res.text);
        return (await waitForAudit(app, key, res.body.audit_id)).body;
      };
      await run({});
      await receiver.waitFor(1);
      const facts = (await app.kv.get(keys.siteFacts(projectId))).value;
      assert.ok(facts);

      broken = true;
      const scoped = await run({ max_depth: 0 });
      await receiver.waitFor(2);
      await quiet(200);
      const events = (name: string) => receiver.received.filter((e) => e.body.event === name);
      const done = events("audit.completed").find((e) => e.body.data.audit_id === scoped.audit_id)!;
      assert.equal(done.body.data.changes.regressed, true, "the comparison is still reported");
      assert.equal(events("audit.regressed").length, 0, "other options: no regression alert");
      assert.deepEqual((await app.kv.get(keys.siteFacts(projectId))).value, facts);

      // The same options again, on a site that got worse: that one is a regression.
      broken = false;
      await run({ max_depth: 0 });
      broken = true;
      const again = await run({ max_depth: 0 });
      await pollUntil(() => Promise.resolve(events("audit.regressed").length === 1), truthy);
      assert.equal(events("audit.regressed")[0].body.data.audit_id, again.audit_id);
    });
  } finally {
    await receiver.close();
    await site.close();
  }
});
