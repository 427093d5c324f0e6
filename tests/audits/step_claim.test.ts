/**
 * A chain of audit steps in one process (jobs/audit_jobs.ts) claims each step from the record its
 * previous step released, without reading it again (a round trip on a remote KV): and when
 * anything wrote the record since, the claim's check fails and it reads the record after all, so
 * the step is still taken, once, as no new attempt. A step releases the record it checks as its
 * claim wrote it, unread: a record written during the step fails its commit, and the step is
 * taken again once the lease runs out.
 */
import assert from "node:assert/strict";
import { type AuditRunner, runAuditJob } from "../../domain/audits/job.ts";
import type { Deps } from "../../domain/platform/mod.ts";
import type { AuditRecord } from "../../domain/audits/record.ts";
import { auditRunner } from "../../jobs/audit_jobs.ts";
import { keys } from "../../kv/keys.ts";
import { type TestApp, withApp } from "../helpers/app.ts";
import { startLiveAudit } from "../helpers/credits.ts";
import { openTestKv } from "../helpers/kv.ts";
import { html, page, serveSite } from "../helpers/sites.ts";

/** `kv` counting its reads (gets and getMany) of the keys `counts` is true of. */
function countingReadsOf(
  kv: Deno.Kv,
  counts: (key: Deno.KvKey) => boolean,
): { kv: Deno.Kv; reads: () => number } {
  let n = 0;
  const proxy = new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "get") {
        return (k: Deno.KvKey, o?: unknown) => {
          if (counts(k)) n++;
          return value.call(target, k, o);
        };
      }
      if (prop === "getMany") {
        return (ks: Deno.KvKey[], o?: unknown) => {
          n += ks.filter(counts).length;
          return value.call(target, ks, o);
        };
      }
      return value.bind(target);
    },
  });
  return { kv: proxy, reads: () => n };
}

/** `kv` counting its reads of `key`. */
function countingReads(kv: Deno.Kv, key: Deno.KvKey): { kv: Deno.Kv; reads: () => number } {
  const name = JSON.stringify(key);
  return countingReadsOf(kv, (k) => JSON.stringify(k) === name);
}

/** A web process runs no job: the test is the worker, one step at a time. */
const WEB = { env: { SERVICE_ROLE: "web", CRAWL_STEP_PAGES: "1" } };

const site = () =>
  serveSite((p) => {
    if (p === "/") return html(page({ title: "Home of the step site", links: ["/a", "/b"] }));
    if (p === "/a" || p === "/b") return html(page({ title: `Page ${p} of the step site` }));
    return undefined;
  });

/** The crawl's steps so far. */
async function stepsOf(kv: Deno.Kv, auditId: string): Promise<number> {
  return (await kv.get<{ steps: number }>(keys.auditCrawl(auditId))).value!.steps;
}

/** Another writer: the record written again as it is (a new versionstamp, nothing else). */
async function rewrite(kv: Deno.Kv, key: Deno.KvKey): Promise<void> {
  const entry = await kv.get<AuditRecord>(key);
  assert.ok((await kv.atomic().check(entry).set(key, entry.value).commit()).ok);
}

/** The runner of `deps`, with another writer rewriting `key` as each step starts (after its claim). */
function rewritingRunner(deps: Deps, kv: Deno.Kv, key: Deno.KvKey): AuditRunner {
  const base = auditRunner(deps);
  return {
    ...base,
    input: async (...args: Parameters<typeof base.input>) => {
      await rewrite(kv, key);
      return await base.input(...args);
    },
  };
}

/** Takes the audit's steps until the next is the step of the site-wide checks. */
async function stepToFinalize(kv: Deno.Kv, deps: Deps, auditId: string): Promise<void> {
  const phase = async () =>
    (await kv.get<{ phase: string }>(keys.auditCrawl(auditId))).value!.phase;
  while ((await phase()) !== "finalize") {
    assert.equal(await runAuditJob(deps, auditId, auditRunner(deps)), "next");
  }
}

/** An audit of `origin` started by a live account (the test is the worker). */
async function startAudit(app: TestApp, origin: string) {
  const { accountId, id } = await startLiveAudit(app, origin);
  return { accountId, auditId: id };
}

Deno.test("audit steps: the next step claims from the released record without reading it", () =>
  withApp(async (app) => {
    const s = site();
    try {
      const { accountId, auditId } = await startAudit(app, s.origin);
      const deps = app.service.services.deps;
      const counted = countingReads(app.kv, keys.audit(accountId, auditId));
      // One KV object for the whole chain (what a worker has); a fresh one for the baseline.
      const chained = { ...deps, kv: counted.kv };
      assert.equal(await runAuditJob(chained, auditId, auditRunner(chained)), "next");
      const afterFirst = counted.reads();
      assert.equal(await runAuditJob(chained, auditId, auditRunner(chained)), "next");
      const chainedReads = counted.reads() - afterFirst;
      // The same step without the released record known (another process, a message): it reads.
      const other = countingReads(app.kv, keys.audit(accountId, auditId));
      const fresh = { ...deps, kv: other.kv };
      assert.equal(await runAuditJob(fresh, auditId, auditRunner(fresh)), "next");
      assert.equal(chainedReads, other.reads() - 1, `${chainedReads} vs ${other.reads()}`);
      // Nor does a step read it to release it: its commit checks it as the claim wrote it.
      assert.equal(chainedReads, 0);
      while ((await runAuditJob(chained, auditId, auditRunner(chained))) === "next");
      const done = (await app.kv.get<AuditRecord>(keys.audit(accountId, auditId))).value!;
      assert.equal(done.status, "completed");
      assert.equal(done.attempts, 1);
    } finally {
      await s.close();
    }
  }, WEB));

/** A test on a started audit whose first step ran (this test is the worker, step by step). */
function afterFirstStep(
  name: string,
  fn: (
    t: {
      app: TestApp;
      deps: TestApp["service"]["services"]["deps"];
      auditId: string;
      key: Deno.KvKey;
    },
  ) => Promise<void>,
): void {
  Deno.test(name, () =>
    withApp(async (app) => {
      const s = site();
      try {
        const { accountId, auditId } = await startAudit(app, s.origin);
        const deps = app.service.services.deps;
        assert.equal(await runAuditJob(deps, auditId, auditRunner(deps)), "next");
        await fn({ app, deps, auditId, key: keys.audit(accountId, auditId) });
      } finally {
        await s.close();
      }
    }, WEB));
}

afterFirstStep(
  "audit steps: a record written since its release is read again, the step taken once",
  async ({ app, deps, auditId, key }) => {
    // Another writer: the kept record is stale now.
    await rewrite(app.kv, key);
    const stepsBefore = await stepsOf(app.kv, auditId);
    assert.equal(await runAuditJob(deps, auditId, auditRunner(deps)), "next");
    assert.equal(await stepsOf(app.kv, auditId), stepsBefore + 1, "the step was taken, once");
    while ((await runAuditJob(deps, auditId, auditRunner(deps))) === "next");
    const done = (await app.kv.get<AuditRecord>(key)).value!;
    assert.equal(done.status, "completed");
    assert.equal(done.attempts, 1, "a stale release is no new attempt");
  },
);

afterFirstStep(
  "audit steps: a record written during a step fails that step's commit; the step is taken again, once",
  async ({ app, deps, auditId, key }) => {
    const stepsBefore = await stepsOf(app.kv, auditId);
    // Another writer while the step runs (after its claim).
    const writing = rewritingRunner(deps, app.kv, key);
    assert.equal(await runAuditJob(deps, auditId, writing), "idle");
    assert.equal(await stepsOf(app.kv, auditId), stepsBefore, "the step did not count");
    // Its lease runs out (the writer is the one to send the audit on; here, the clock), and the
    // next claim takes the step again; the audit completes with each page fetched once.
    const held = (await app.kv.get<AuditRecord>(key)).value!;
    app.clock.set(held.leaseUntil + 1);
    while ((await runAuditJob(deps, auditId, auditRunner(deps))) === "next");
    const done = (await app.kv.get<AuditRecord>(key)).value!;
    assert.equal(done.status, "completed");
    // Each of the three pages recorded once (the lost step's fetch did not count).
    const state = (await app.kv.get<{ fetches: number }>(keys.auditCrawl(auditId))).value!;
    assert.equal(state.fetches, 3);
  },
);

Deno.test("audit steps: the process that created an audit claims its first step without reading its record or owner", async () => {
  const s = site();
  // Counting every read of an audit's record or owner, on the one KV object the app shares (what
  // a process has): the creating request and the steps both see it.
  const counted = countingReadsOf(
    await openTestKv(),
    (k) => k[0] === keys.audit("a", "b")[0] || k[0] === keys.auditOwner("b")[0],
  );
  try {
    await withApp(async (app) => {
      const { accountId, auditId } = await startAudit(app, s.origin);
      const deps = app.service.services.deps;
      const before = counted.reads();
      assert.equal(await runAuditJob(deps, auditId, auditRunner(deps)), "next");
      assert.equal(counted.reads() - before, 0, "the first claim checked the created record");
      while ((await runAuditJob(deps, auditId, auditRunner(deps))) === "next");
      const done = (await app.kv.get<AuditRecord>(keys.audit(accountId, auditId))).value!;
      assert.equal(done.status, "completed");
      assert.equal(done.attempts, 1);
    }, { ...WEB, kv: counted.kv });
  } finally {
    await s.close();
  }
});

Deno.test("audit steps: a record written after its creation is read by the first claim, the step taken once", async () => {
  const s = site();
  const counted = countingReadsOf(await openTestKv(), (k) => k[0] === keys.audit("a", "b")[0]);
  try {
    await withApp(async (app) => {
      const { accountId, auditId } = await startAudit(app, s.origin);
      const key = keys.audit(accountId, auditId);
      await rewrite(app.kv, key); // the noted record is stale now
      const deps = app.service.services.deps;
      const before = counted.reads();
      assert.equal(await runAuditJob(deps, auditId, auditRunner(deps)), "next");
      assert.ok(counted.reads() > before, "the claim read the record its check found changed");
      assert.equal(await stepsOf(app.kv, auditId), 1, "the first step ran, once");
      while ((await runAuditJob(deps, auditId, auditRunner(deps))) === "next");
      const done = (await app.kv.get<AuditRecord>(key)).value!;
      assert.equal(done.status, "completed");
      assert.equal(done.attempts, 1);
    }, { ...WEB, kv: counted.kv });
  } finally {
    await s.close();
  }
});

afterFirstStep(
  "audit steps: the completion finishes from the record its claim wrote, without reading it",
  async ({ app, auditId, key }) => {
    // Step on with a counting KV object (the chain's own: what it noted stays with it).
    const counted = countingReads(app.kv, key);
    const deps = { ...app.service.services.deps, kv: counted.kv };
    assert.equal(await runAuditJob(deps, auditId, auditRunner(deps)), "next");
    const before = counted.reads();
    while ((await runAuditJob(deps, auditId, auditRunner(deps))) === "next");
    assert.equal(counted.reads() - before, 0, "no step, nor the completion, read the record");
    const done = (await app.kv.get<AuditRecord>(key)).value!;
    assert.equal(done.status, "completed");
    assert.equal(done.attempts, 1);
  },
);

afterFirstStep(
  "audit steps: a record written during the last step is read by the completion, which finishes once",
  async ({ app, deps, auditId, key }) => {
    await stepToFinalize(app.kv, deps, auditId);
    // Another writer during the step of the site-wide checks: what the claim wrote is stale
    // when the completion finishes the audit.
    const writing = rewritingRunner(deps, app.kv, key);
    assert.equal(await runAuditJob(deps, auditId, writing), "idle");
    const done = (await app.kv.get<AuditRecord>(key)).value!;
    assert.equal(done.status, "completed");
    assert.equal(done.attempts, 1);
    const issues = (await app.kv.get(keys.auditIssues(auditId))).value;
    assert.ok(issues, "the completing commit wrote the issues");
  },
);

afterFirstStep(
  "audit steps: a project changed while the last step runs is read again by the completion, the change kept",
  async ({ app, deps, auditId, key }) => {
    await stepToFinalize(app.kv, deps, auditId);
    const { accountId, projectId } = (await app.kv.get<AuditRecord>(key)).value!;
    const projectKey = keys.project(accountId, projectId);
    // The completion's reads start with the step; the project is renamed after them.
    const base = auditRunner(deps);
    const renaming = {
      ...base,
      input: async (...args: Parameters<typeof base.input>) => {
        await new Promise((r) => setTimeout(r, 20));
        const p = await app.kv.get<{ name: string }>(projectKey);
        await app.kv.set(projectKey, { ...p.value!, name: "Renamed meanwhile" });
        return await base.input(...args);
      },
    };
    assert.equal(await runAuditJob(deps, auditId, renaming), "idle");
    const project = (await app.kv.get<{ name: string; latestAudit: { audit_id: string } }>(
      projectKey,
    )).value!;
    assert.equal(project.name, "Renamed meanwhile", "the completion kept the change");
    assert.equal(project.latestAudit.audit_id, auditId);
    assert.equal((await app.kv.get<AuditRecord>(key)).value!.status, "completed");
  },
);
