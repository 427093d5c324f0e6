/**
 * Incremental crawls (issue 32 item 3), in one run: a 10,000-page site (tests/bench/servers/
 * big_site.ts with ETag / Last-Modified) audited in full, then 5% of its pages changed and the
 * same project audited again (conditional requests, stored facts reused), against a full audit
 * of the changed site on a fresh project; then, on a second service with `CRAWL_INCREMENTAL=0`,
 * a full audit that stores no facts (what storing them costs a full audit). Per audit: wall
 * time, requests, HTML bytes the site sent, 304s, pages reused, and whether the audits of the
 * changed site found the same.
 *
 * `BENCH_INCREMENTAL_PAGES` scales it down for a quick run (default 10000).
 * Run: deno task bench incremental
 */
import {
  liveAccount,
  newProject,
  packPaidEvent,
  postStripe,
  type ServerProcess,
  startServer,
  tempKvPath,
} from "../proof/process.ts";
import { startSiteProcess } from "./site_process.ts";

const PAGES = Number(Deno.env.get("BENCH_INCREMENTAL_PAGES") ?? 10_000);
const CHANGED_PERCENT = 5;
/** As `deno task start` runs the service: a 2 MiB young generation (see docs/contributors.md). */
const FLAGS = ["--v8-flags=--max-semi-space-size=2"];

const site = await startSiteProcess("big_site.ts", String(PAGES), "validators");
const kvFile = await tempKvPath();
const ENV = {
  CRAWL_MAX_PAGES: String(PAGES + 100),
  CRAWL_CONCURRENCY: "8",
  CRAWL_STEP_PAGES: "100",
  RATE_LIMIT_PER_MINUTE: "100000000",
  JOB_LEASE_MS: "60000",
};
let server: ServerProcess = await startServer(kvFile.path, ENV, 30_000, FLAGS);
const bareKv = await tempKvPath();

async function paidKey(): Promise<string> {
  const { accountId, key } = await liveAccount(server);
  const paid = await postStripe(server, await packPaidEvent(server, accountId, "pack_10000"));
  if (paid.status !== 200) throw new Error(`credits: ${paid.text}`);
  return key;
}

async function audit(key: string, project: string, label: string) {
  const before = await site.stats();
  const t0 = performance.now();
  const started = await server.req("POST", `/v1/projects/${project}/audits`, { key });
  if (started.status !== 202) throw new Error(`${label}: ${started.status} ${started.text}`);
  let done;
  while (true) {
    const r = await server.req("GET", `/v1/audits/${started.body.audit_id}`, { key });
    if (r.body.status === "completed" || r.body.status === "failed") {
      done = r.body;
      break;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const secs = (performance.now() - t0) / 1000;
  const after = await site.stats();
  const row = {
    label,
    status: done.status as string,
    secs,
    requests: after.served - before.served,
    bytes: (after.htmlBytes ?? 0) - (before.htmlBytes ?? 0),
    notModified: (after.notModified ?? 0) - (before.notModified ?? 0),
    reused: done.crawl?.pages_reused as number,
    fetched: done.crawl?.pages_fetched as number,
    score: done.score as number,
    id: done.audit_id as string,
  };
  console.log(
    `${label}: ${row.status}, ${row.secs.toFixed(1)} s, ${row.requests} requests, ` +
      `${(row.bytes / 1e6).toFixed(2)} MB of HTML, ${row.notModified} answered 304, ` +
      `${row.fetched} pages fetched, ${row.reused} reused, score ${row.score}`,
  );
  return row;
}

/** The issues of an audit as check → affected count (what a full audit is compared by). */
async function issueCounts(key: string, auditId: string): Promise<string> {
  const out: Record<string, number> = {};
  let cursor: string | null = null;
  do {
    const q: string = `?limit=100${cursor ? `&cursor=${cursor}` : ""}`;
    const r = await server.req("GET", `/v1/audits/${auditId}/issues${q}`, { key });
    for (const i of r.body.data) if (i.affected_count > 0) out[i.check] = i.affected_count;
    cursor = r.body.next_cursor;
  } while (cursor !== null);
  return JSON.stringify(Object.entries(out).sort());
}

try {
  const key = await paidKey();
  const project = await newProject(server, key, site.origin);
  await audit(key, project, `full audit, ${PAGES} pages`);
  const change = await (await fetch(`${site.origin}/__change?percent=${CHANGED_PERCENT}`, {
    method: "POST",
  })).json();
  const inc = await audit(key, project, `incremental re-audit, ${change.changed} pages changed`);
  const fresh = await audit(key, await newProject(server, key, site.origin), "full audit of it");
  const same = (await issueCounts(key, inc.id)) === (await issueCounts(key, fresh.id)) &&
    inc.score === fresh.score;
  console.log(
    `incremental vs full: wall ${(inc.secs / fresh.secs * 100).toFixed(0)}%, requests ` +
      `${(inc.requests / fresh.requests * 100).toFixed(0)}%, HTML bytes ` +
      `${(inc.bytes / fresh.bytes * 100).toFixed(1)}% (target about ${CHANGED_PERCENT}%) ${
        inc.bytes <= fresh.bytes * (CHANGED_PERCENT + 2) / 100 ? "OK" : "MISS"
      }; findings ${same ? "equal OK" : "DIFFER MISS"}`,
  );
  await server.kill();
  server = await startServer(bareKv.path, { ...ENV, CRAWL_INCREMENTAL: "0" }, 30_000, FLAGS);
  const bareKey = await paidKey();
  const bare = await audit(
    bareKey,
    await newProject(server, bareKey, site.origin),
    "full audit with CRAWL_INCREMENTAL=0 (no facts stored)",
  );
  console.log(
    `storing facts: a full audit that stores them took ${
      (fresh.secs / bare.secs * 100).toFixed(0)
    }% of the wall time of one that stores none`,
  );
} finally {
  await server.kill();
  await site.close();
  await kvFile.remove();
  await bareKv.remove();
}
