/**
 * Schema fuzzing (issue 8): for each `/v1` operation in the service's own OpenAPI document,
 * generated requests (valid and invalid bodies, headers, paths and queries; `FUZZ_RUNS` below) go
 * over real HTTP to a running app, and every answer must be
 *
 * - a status the document lists for that operation, never a 500 (the one 5xx that may appear is
 *   the documented 503 `billing_not_configured`, for the plan and pack left unconfigured here);
 * - for non-2xx, the error shape with a code from `domain/platform/errors.ts` whose status matches and
 *   which the document lists under that status; for 2xx, a body matching the response schema;
 * - carrying integer `X-RateLimit-*` headers (and `Retry-After` on 429), echoing a sane
 *   `X-Request-Id`;
 * - a failure whenever the case was built to be invalid;
 * - and never a partial write: when every request of a batch failed, the visible state of the
 *   fuzzed accounts and the record counts in KV are exactly what they were before the batch.
 *
 * `FUZZ_RUNS` sets the cases per operation: by default 100 (four batches of 25 per operation: the
 * file costs the suite ~10 s, not ~40), 2,000 with `SERPWRIGHT_DEEP=1`. `FUZZ_SEED`
 * replays a run (a failing run prints its seed).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { ERROR_CODES } from "../../domain/platform/errors.ts";
import { setWebhookNetOverrides } from "../../domain/webhooks/target.ts";
import { startFakeStripe, stripeEnv } from "../billing/fake_stripe.ts";
import { freshIp, startTestApp, type TestApp } from "../helpers/app.ts";
import { type Case, caseArb, type Operation, operations, type World } from "./requests.ts";
import { conforms, type Doc } from "./schema_arbitraries.ts";

const RUNS = Number(
  Deno.env.get("FUZZ_RUNS") ?? (Deno.env.get("SERPWRIGHT_DEEP") === "1" ? 2000 : 100),
);
const BATCH = 25;
const SEED = Deno.env.get("FUZZ_SEED");

/** Record collections whose size must not move when every request of a batch failed. */
const COUNTED = [
  "accounts",
  "accounts_by_email",
  "api_keys",
  "api_keys_by_account",
  "projects",
  "audits",
  "articles",
  "webhooks",
  "checkouts",
  "pending_checkouts",
  "credit_ledger",
  "balances",
  "idempotency",
  "sandbox_usage",
  "schedules",
  "schedules_due",
];

interface Outcome {
  c: Case;
  status: number;
  headers: Headers;
  text: string;
  // deno-lint-ignore no-explicit-any
  body: any;
}

async function send(c: Case): Promise<Outcome> {
  const res = await fetch(c.url, {
    method: c.method,
    headers: c.headers,
    body: c.body as BodyInit | undefined,
  });
  const text = await res.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch { /* checked below */ }
  return { c, status: res.status, headers: res.headers, text, body };
}

function describe(o: Outcome): string {
  const body = typeof o.c.body === "string" ? o.c.body.slice(0, 300) : o.c.body ? "<bytes>" : "";
  return `${o.c.method} ${o.c.url.slice(0, 300)} headers=${
    JSON.stringify(o.c.headers).slice(0, 400)
  } body=${body} invalid=${o.c.invalid} → ${o.status} ${o.text.slice(0, 300)}`;
}

/** Every per-response rule; throws with the case on the first violation. */
function check(doc: Doc, op: Operation, o: Outcome): void {
  const where = describe(o);
  const status = String(o.status);
  assert.ok(op.statuses.has(status), `undocumented status ${status}: ${where}`);
  assert.ok(o.status !== 500, `500: ${where}`);
  for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
    assert.match(o.headers.get(h) ?? "", /^\d+$/, `${h}: ${where}`);
  }
  assert.equal(o.headers.get("x-injected"), null, `header injection: ${where}`);
  const rid = o.headers.get("x-request-id") ?? "";
  if (o.c.requestId !== undefined && /^[A-Za-z0-9._-]{1,100}$/.test(o.c.requestId)) {
    assert.equal(rid, o.c.requestId, `X-Request-Id echo: ${where}`);
  } else {
    assert.match(rid, /^req_[A-Za-z0-9]+$/, `generated X-Request-Id: ${where}`);
  }
  const response = op.op.responses[status];
  if (o.status >= 200 && o.status < 300) {
    assert.equal(o.c.invalid, null, `an invalid request succeeded: ${where}`);
    assert.notEqual(o.body, null, `2xx body is not JSON: ${where}`);
    const schema = response.content?.["application/json"]?.schema;
    const bad = conforms(doc, schema, o.body);
    assert.equal(bad, null, `2xx body does not match its schema (${bad}): ${where}`);
    return;
  }
  const e = o.body?.error;
  assert.ok(
    e && typeof e.code === "string" && typeof e.message === "string" &&
      typeof e.doc_url === "string",
    `not the error shape: ${where}`,
  );
  const known = (ERROR_CODES as Record<string, { status: number }>)[e.code];
  assert.ok(known, `code not in ERROR_CODES: ${where}`);
  assert.equal(known.status, o.status, `code/status mismatch: ${where}`);
  assert.ok(e.doc_url.endsWith(`#${e.code}`), `doc_url: ${where}`);
  const listed = Object.keys(response.content?.["application/json"]?.examples ?? {});
  assert.ok(listed.includes(e.code), `code ${e.code} not documented under ${status}: ${where}`);
  if (o.status === 503) {
    // The fuzzed server has no payment provider and no mail server.
    const expected = op.path === "/v1/account/verify-email"
      ? "mail_not_configured"
      : "billing_not_configured";
    assert.equal(e.code, expected, where);
  }
  if (o.status === 429) assert.match(o.headers.get("retry-after") ?? "", /^\d+$/, where);
  assert.ok(!/\n\s+at /.test(e.message), `stack trace leaked: ${where}`);
}

/** Whether any case of `op` can be built invalid (GET /v1/plans takes nothing that can be). */
function canFail(op: Operation): boolean {
  return op.secured || op.pathParams.length > 0 || op.bodySchema !== null || op.idempotent ||
    op.queryParams.some((q) => q.required);
}

/** What the fuzzed accounts can see, minus fields that background work moves on its own. */
async function snapshot(app: TestApp, keys: string[]): Promise<string> {
  const out: unknown[] = [];
  for (const key of keys) {
    for (
      const path of ["/v1/account", "/v1/projects", "/v1/api-keys", "/v1/webhooks", "/v1/credits"]
    ) {
      const res = await app.req("GET", path, { key });
      out.push([path, res.status, strip(res.body)]);
    }
  }
  for (const prefix of COUNTED) {
    let n = 0;
    for await (const _ of app.kv.list({ prefix: [prefix] })) n++;
    out.push([prefix, n]);
  }
  return JSON.stringify(out);
}

const VOLATILE = new Set([
  "last_used_at",
  "latest_audit",
  "status",
  "failure_count",
  "last_success_at",
  "last_failure_at",
  "active",
]);
function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip);
  if (v && typeof v === "object") {
    return Object.fromEntries(
      Object.entries(v).filter(([k]) => !VOLATILE.has(k)).map(([k, x]) => [k, strip(x)]),
    );
  }
  return v;
}

Deno.test({
  name: "schema fuzzing: every /v1 operation answers only documented statuses, never 500",
  // The app's queue listener and webhook retries outlive single steps; close() drains them.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    const fake = await startFakeStripe();
    // The pro plan and the largest pack stay unconfigured, so the documented 503 is reachable.
    const app = await startTestApp({
      env: {
        ...stripeEnv(fake, { STRIPE_PRICE_PRO: "", STRIPE_PRICE_PACK_10000: "" }),
        RATE_LIMIT_PER_MINUTE: "100000000",
        // The fuzz signs up thousands of accounts; the per-IP limit is checked at the end.
        SIGNUP_RATE_GLOBAL_PER_HOUR: "10000000",
        SIGNUP_SANDBOXES_PER_BLOCK_PER_DAY: "10000000",
        CRAWL_MAX_PAGES: "2",
      },
    });
    // Webhook URLs resolve through a fake DNS (no network here); deliveries give up quickly.
    setWebhookNetOverrides(app.service.services.deps, {
      resolver: (host) => Promise.resolve(/\.example\.(com|org)$/.test(host) ? ["127.0.0.1"] : []),
      timeoutMs: 200,
    });
    try {
      const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const deadPort = (closed.addr as Deno.NetAddr).port;
      closed.close();
      const siteUrl = `http://127.0.0.1:${deadPort}/`;

      const sandbox = await app.signup();
      const liveAcct = await app.signup();
      const live = await app.liveKey(liveAcct.accountId);
      const foreign = await app.signup();
      const foreignLive = await app.liveKey(foreign.accountId);
      const mk = async (key: string, path: string, body: unknown, field: string) => {
        const res = await app.req("POST", path, { key, body });
        assert.ok(res.status < 300, `${path}: ${res.status} ${res.text}`);
        return res.body[field] as string;
      };
      const pools: Record<string, string[]> = {
        projects: [
          await mk(sandbox.key, "/v1/projects", { url: siteUrl }, "project_id"),
          await mk(live, "/v1/projects", { url: siteUrl }, "project_id"),
          await mk(foreignLive, "/v1/projects", { url: siteUrl }, "project_id"),
        ],
        keys: [await mk(foreignLive, "/v1/api-keys", {}, "id")],
        webhooks: [
          await mk(foreignLive, "/v1/webhooks", { url: "https://f.example.com/h" }, "webhook_id"),
        ],
        audits: [
          await mk(
            foreign.key,
            `/v1/projects/${await mk(
              foreign.key,
              "/v1/projects",
              { url: siteUrl },
              "project_id",
            )}/audits`,
            undefined,
            "audit_id",
          ),
        ],
        articles: [],
        rechecks: [],
        upgrades: [],
      };
      const revoked = await app.req("POST", "/v1/api-keys", { key: live, body: {} });
      await app.req("DELETE", `/v1/api-keys/${revoked.body.id}`, { key: live });
      const world: World = {
        keys: { sandbox: sandbox.key, live, revoked: revoked.body.api_key },
        pools: Object.fromEntries(Object.keys(pools).map((k) => [k, () => pools[k]])),
        sharedIdempotencyKeys: ["shared-1", "shared-2", "shared-3", "shared-4"],
      };
      const learn = (o: Outcome) => {
        if (o.status < 200 || o.status >= 300 || !o.body) return;
        const b = o.body;
        const add = (pool: string, id: unknown) => {
          if (typeof id === "string" && !pools[pool].includes(id)) pools[pool].push(id);
        };
        add("projects", b.project_id);
        add("webhooks", b.webhook_id);
        add("audits", b.audit_id);
        add("articles", b.article_id);
        add("rechecks", b.recheck_id);
        add("upgrades", b.upgrade_id);
        if (o.c.method === "POST" && o.c.url.includes("/v1/api-keys")) add("keys", b.id);
      };

      const doc: Doc = (await app.req("GET", "/v1/openapi.json")).body;
      const ops = operations(doc);
      assert.equal(
        ops.length,
        48,
        "the 20 interface operations, the 3 audit findings listings and the page groups, the " +
          "2 fixes listings, the audit summary, the report and its PDF, 3 audit and 3 article " +
          "share operations, the 2 account-wide share " +
          "operations, the 3 schedule operations, the 2 re-check operations, the 2 " +
          "connected-apps operations, verify-email, the 2 upgrade operations and the billing " +
          "portal",
      );
      const snapKeys = [sandbox.key, live];
      let before = await snapshot(app, snapKeys);
      const totals: string[] = [];

      for (const op of ops) {
        await t.step(`${op.method} ${op.path}`, async () => {
          let sent = 0;
          let failedBatches = 0;
          const statuses = new Map<number, number>();
          before = await snapshot(app, snapKeys);
          await fc.assert(
            fc.asyncProperty(
              // Half the batches hold only invalid cases, so "no partial write" is checked often.
              (canFail(op) ? fc.boolean() : fc.constant(false)).chain((invalidOnly) => {
                const one = caseArb(doc, op, world, app.url);
                return fc.array(invalidOnly ? one.filter((c) => c.invalid !== null) : one, {
                  minLength: BATCH,
                  maxLength: BATCH,
                });
              }),
              async (cases) => {
                const outcomes = await Promise.all(cases.map(send));
                sent += outcomes.length;
                for (const o of outcomes) {
                  statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
                  check(doc, op, o);
                  learn(o);
                }
                const after = await snapshot(app, snapKeys);
                if (outcomes.every((o) => o.status >= 400)) {
                  failedBatches++;
                  assert.equal(
                    after,
                    before,
                    `a batch of failures changed state:\n${outcomes.map(describe).join("\n")}`,
                  );
                }
                before = after;
              },
            ),
            {
              numRuns: Math.ceil(RUNS / BATCH),
              endOnFailure: true,
              ...(SEED ? { seed: Number(SEED) } : {}),
            },
          );
          assert.ok(sent >= RUNS, `${sent} cases`);
          totals.push(
            `${op.method} ${op.path}: ${sent} cases, ${failedBatches} all-failure batches, ` +
              [...statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(" "),
          );
        });
      }
      console.log(totals.join("\n"));
      // The signup limiter still works after all that: one IP, six signups.
      const ip = freshIp();
      const codes = [];
      for (let i = 0; i < 6; i++) {
        codes.push(
          (await app.req("POST", "/v1/accounts", { body: { email: `z${i}@ex.io` }, ip })).status,
        );
      }
      assert.deepEqual(codes, [201, 201, 201, 201, 201, 429]);
    } finally {
      await app.close();
      await fake.close();
    }
  },
});
