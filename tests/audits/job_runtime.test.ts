/**
 * The job runtime's rules on a store that fails: a transient storage error in a step is retried
 * within the audit's attempts (never failed and refunded on the spot); a sandbox audit whose
 * attempts all die keeps its trial charge; a worker that lost its claim cannot fail the audit.
 */
import assert from "node:assert/strict";
import { keys } from "../../kv/keys.ts";
import { type TestApp, withApp } from "../helpers/app.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { openTestKv } from "../helpers/kv.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import type { AuditRecord } from "../../domain/audits/record.ts";

/**
 * A KV whose commits that write an audit's crawl state fail with a transient error while
 * `failures.left > 0` (each failure spends one).
 */
function flakyKv(kv: Deno.Kv, failures: { left: number }): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          let writesCrawlState = false;
          const proxy: Deno.AtomicOperation = new Proxy(op, {
            get(o, p) {
              if (p === "set") {
                return (key: Deno.KvKey, value: unknown, opts?: { expireIn?: number }) => {
                  if (key[0] === "audit_crawl") writesCrawlState = true;
                  o.set(key, value, opts);
                  return proxy;
                };
              }
              if (p === "commit") {
                return () => {
                  if (writesCrawlState && failures.left > 0) {
                    failures.left--;
                    return Promise.reject(new Error("connection reset by the store"));
                  }
                  return o.commit();
                };
              }
              const v = Reflect.get(o, p);
              if (typeof v !== "function") return v;
              return (...args: unknown[]) => {
                const r = v.apply(o, args);
                return r === o ? proxy : r;
              };
            },
          });
          return proxy;
        };
      }
      const v = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

async function startAudit(app: TestApp, origin: string) {
  const { key, accountId } = await app.signup();
  const proj = await app.req("POST", "/v1/projects", { key, body: { url: origin } });
  const res = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
  assert.equal(res.status, 202, res.text);
  return { key, accountId, auditId: res.body.audit_id as string };
}

/**
 * Audits a one-page site with a fresh sandbox key on an app whose store fails `failures` crawl
 * state commits, and hands the finished audit to `check`.
 */
async function auditOnFlakyStore(
  failures: { left: number },
  check: (app: TestApp, audit: { key: string; accountId: string; auditId: string }, done: {
    // deno-lint-ignore no-explicit-any
    body: any;
    text: string;
  }) => Promise<void>,
) {
  const site = serveSite({ "/": html(page({ title: "Flaky store test site" })) });
  const base = await openTestKv();
  try {
    await withApp(async (app) => {
      const audit = await startAudit(app, site.origin);
      await check(app, audit, await waitForAudit(app, audit.key, audit.auditId));
    }, { kv: flakyKv(base, failures) });
  } finally {
    try {
      base.close();
    } catch { /* closed with the app */ }
    await site.close();
  }
}

Deno.test("a transient store error in a step is retried as a new attempt; the audit completes", async () => {
  const failures = { left: 1 };
  await auditOnFlakyStore(failures, async (app, { accountId, auditId }, done) => {
    assert.equal(done.body.status, "completed", done.text);
    assert.equal(failures.left, 0, "the failure happened");
    const rec = (await app.kv.get<AuditRecord>(keys.audit(accountId, auditId))).value!;
    assert.equal(rec.attempts, 2, "the failed step counted as one interrupted attempt");
  });
});

Deno.test("a sandbox audit whose every attempt dies fails interrupted and keeps its trial charge", async () => {
  await auditOnFlakyStore({ left: 1_000 }, async (app, { accountId }, done) => {
    assert.equal(done.body.status, "failed", done.text);
    assert.equal(done.body.error.code, "audit_interrupted");
    const usage = (await app.kv.get<{ audits: number }>(keys.sandboxUsage(accountId))).value;
    assert.equal(usage?.audits, 1, "the trial audit stays spent");
  });
});
