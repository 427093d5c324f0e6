/**
 * Page groups (domain/audits/groups.ts) on a large inventory, in one run against its baseline:
 *
 * 0. baseline: one plain read of every page record (what any site-wide pass costs at least);
 * 1. `computeGroups` as an audit's completion runs it: the detection read, the assignment read
 *    with the index writes and the group records;
 * 2. the first page of `?group=` (`listAuditPages` with a group, 100 rows) and the groups list.
 *
 * The inventory is written with the crawl's writers (tests/helpers/seed_audit.ts): 20,000 pages
 * by default, `SERPWRIGHT_DEEP=1` 100,000, `BENCH_GROUP_PAGES` any count; every 5th URL is moved
 * under one of 40 other first segments so detection has templates to find. RSS is sampled every
 * 20 ms (peak against the value before each step).
 * Run: deno task bench groups
 */
import { computeGroups, readGroups } from "../../domain/audits/groups.ts";
import { listAuditGroups, listAuditPages } from "../../domain/audits/results.ts";
import { listInPages } from "../../domain/audit_engine/mod.ts";
import { keys } from "../../domain/platform/store.ts";
import type { Deps } from "../../domain/platform/mod.ts";
import { seedCompletedAudit } from "../helpers/seed_audit.ts";
import { tempKvPath } from "../proof/process.ts";

const PAGES = Number(
  Deno.env.get("BENCH_GROUP_PAGES") ??
    (Deno.env.get("SERPWRIGHT_DEEP") === "1" ? 100_000 : 20_000),
);
const MiB = 1024 * 1024;
const AUDIT = "aud_groupbench00000001";
const ACCOUNT = "acct_groupbench";

async function measured<T>(work: () => Promise<T>) {
  const before = Deno.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, Deno.memoryUsage().rss)), 20);
  const t0 = performance.now();
  try {
    const value = await work();
    return {
      value,
      ms: performance.now() - t0,
      before,
      peak: Math.max(peak, Deno.memoryUsage().rss),
    };
  } finally {
    clearInterval(timer);
  }
}

const tmp = await tempKvPath();
const kv = await Deno.openKv(tmp.path);
try {
  await seedCompletedAudit(kv, {
    accountId: ACCOUNT,
    projectId: "proj_g",
    auditId: AUDIT,
    pages: PAGES,
  });
  // Every 5th URL moves under /s<k>/ (40 templates of PAGES/200 URLs each).
  let moved = 0;
  for await (const page of listInPages(kv, keys.auditPages(AUDIT), 500)) {
    const op = kv.atomic();
    for (const { key, value: r } of page) {
      if (r.seq % 5 !== 0 || !r.url.includes("/p/")) continue;
      const url = r.url.replace("/p/", `/s${(r.seq / 5) % 40}/`);
      op.delete(key).set(keys.auditPage(AUDIT, url), { ...r, url });
      moved++;
    }
    await op.commit();
  }

  const base = await measured(async () => {
    let n = 0;
    for await (const page of listInPages(kv, keys.auditPages(AUDIT))) n += page.length;
    return n;
  });
  const pass = await measured(() => computeGroups(kv, AUDIT, undefined));
  const groups = await readGroups(kv, AUDIT);
  const deps = { kv, config: { publicBaseUrl: "http://localhost" } } as unknown as Deps;
  const caller = { accountId: ACCOUNT, mode: "live" as const };
  const probe = groups.find((g) => g.source === "detected" && g.name !== "p")!.name;
  const firstPage = await measured(() =>
    listAuditPages(deps, caller, AUDIT, { group: probe, limit: 100 })
  );
  const list = await measured(() => listAuditGroups(deps, caller, AUDIT));
  // The heap after a collection (with --v8-flags=--expose-gc): what the pass kept; RSS also
  // holds SQLite's page cache and heap V8 has not returned.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heapAfter = Deno.memoryUsage().heapUsed;

  const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));
  const mib = (x: number) => (x / MiB).toFixed(0);
  console.log(`pages ${base.value} (${moved} under 40 other templates; 20 are detected)`);
  console.log(
    `baseline: one read of every record ${base.ms.toFixed(0)} ms (${
      rate(base.value, base.ms)
    } rows/s), RSS ${mib(base.before)} -> peak ${mib(base.peak)} MiB`,
  );
  console.log(
    `computeGroups: ${pass.ms.toFixed(0)} ms (${rate(base.value, pass.ms)} rows/s, ` +
      `${(pass.ms / base.ms).toFixed(1)}x the baseline read), RSS ${mib(pass.before)} -> peak ` +
      `${mib(pass.peak)} MiB; ${groups.length} groups (${
        groups.map((g) => `${g.name} ${g.pages}`).slice(0, 4).join(", ")
      }, …)`,
  );
  console.log(
    `?group=${probe} first page: ${firstPage.value.data.length} rows in ${
      firstPage.ms.toFixed(1)
    } ms; ` +
      `GET groups: ${list.value.data.length} groups in ${list.ms.toFixed(1)} ms`,
  );
  console.log(`heap used at the end${gc ? " (after gc)" : ""}: ${mib(heapAfter)} MiB`);
} finally {
  kv.close();
  await tmp.remove();
}
