/**
 * A multi-step crawl killed with SIGKILL in its middle: a new process on the same KV file resumes
 * it from the last committed step (not from page one), fetches again at most one step's worth of
 * pages, charges nothing twice, and ends with the same findings as an uninterrupted audit of the
 * same site.
 */
import { openTestKv } from "../helpers/kv.ts";
import assert from "node:assert/strict";
import type { CrawlState } from "../../domain/audit_engine/crawl/state.ts";
import { keys } from "../../kv/keys.ts";
import { html, page, type Route, serveSite } from "../helpers/sites.ts";
import {
  CHILD_POLL,
  killAll,
  liveAccount,
  newProject,
  packPaidEvent,
  postStripe,
  type ServerProcess,
  startServer,
  tempKvPath,
  until,
} from "./process.ts";
import { waitForAudit } from "../helpers/jobs.ts";

const STEP = 4;
const PAGES = 40;

/** Page 18 hangs while `gate` is closed: the kill lands inside a step, with its pages in flight. */
let release!: () => void;
const gate = new Promise<void>((r) => (release = r));
let hanging = true;

/** A chain of pages, two without a title, one linking a 404 and a redirect. */
function routes(): Record<string, Route> {
  const r: Record<string, Route> = {
    "/old": { status: 301, headers: { location: "/p1" } },
  };
  for (let i = 0; i < PAGES; i++) {
    const links = [`/p${i + 1}`, `/p${i + 2}`];
    if (i === 5) links.push("/missing", "/old");
    r[i === 0 ? "/" : `/p${i}`] = {
      ...html(
        page({
          title: i % 17 === 3 ? null : `Resumable crawl page number ${i}`,
          key: `k${i}`,
          links,
        }),
      ),
      delayMs: 15,
    };
  }
  const slow = r["/p18"];
  r["/p18"] = {
    handler: async () => {
      if (hanging) await gate;
      return new Response(slow.body as string, { headers: slow.headers });
    },
  };
  return r;
}

async function findingsOf(server: ServerProcess, key: string, auditId: string) {
  const issues = await server.req("GET", `/v1/audits/${auditId}/issues?limit=100`, { key });
  assert.equal(issues.status, 200, issues.text);
  const out: Record<string, unknown> = {};
  for (const i of issues.body.data) {
    const items = await server.req("GET", `${i.items_url}?limit=100`, { key });
    out[i.check] = {
      affected: i.affected_count,
      // deno-lint-ignore no-explicit-any
      items: items.body.data.map(({ ttfb_ms: _, ...rest }: any) => rest),
    };
  }
  return out;
}

Deno.test("SIGKILL in the middle of a multi-step crawl: resumed from the last step, same findings", async () => {
  const kvFile = await tempKvPath();
  const site = serveSite(routes());
  const env = { CRAWL_STEP_PAGES: String(STEP), CRAWL_CONCURRENCY: "2" };
  let first: ServerProcess | null = null;
  let second: ServerProcess | null = null;
  try {
    first = await startServer(kvFile.path, env);
    const { accountId, key } = await liveAccount(first);
    assert.equal((await postStripe(first, await packPaidEvent(first, accountId))).status, 200);
    const projectId = await newProject(first, key, site.origin);
    const accepted = await first.req("POST", `/v1/projects/${projectId}/audits`, { key });
    const auditId = accepted.body.audit_id as string;

    // Kill the process in the middle of a step, once the crawl is well under way.
    const pageHits = () => site.hits.filter((h) => h === "/" || /^\/p\d+$/.test(h)).length;
    await until(() => Promise.resolve(site.hits.includes("/p18")), 30_000, "the crawl at /p18");
    await new Promise((r) => setTimeout(r, 100)); // the step's other fetches land
    await first.kill();
    const hitsAtKill = pageHits();
    hanging = false;
    release();

    // What the killed process had committed.
    const kv = await openTestKv(kvFile.path);
    const committed = (await kv.get<CrawlState>(keys.auditCrawl(auditId))).value!;
    kv.close();
    assert.equal(committed.phase, "crawl");
    assert.ok(committed.fetches >= STEP && committed.fetches < PAGES, `${committed.fetches}`);

    second = await startServer(kvFile.path, env);
    const s = second;
    const done = await waitForAudit(s, key, auditId, { ...CHILD_POLL, timeoutMs: 60_000 });
    assert.equal(done.body.status, "completed", done.text);

    // Resumed, not restarted: the pages fetched twice are the dead step's, at most one step.
    const counts = new Map<string, number>();
    for (const h of site.hits) counts.set(h, (counts.get(h) ?? 0) + 1);
    const twice = [...counts].filter(([, n]) => n > 1).map(([h]) => h);
    console.log(
      `crawl resume: killed after ${hitsAtKill} page fetches, ${committed.fetches} committed; ` +
        `fetched twice: ${twice.length} (${twice.join(" ")}), step size ${STEP}`,
    );
    assert.ok(twice.length >= 1 && twice.length <= STEP, `fetched twice: ${twice}`);
    assert.equal(counts.get("/robots.txt"), 1, "robots.txt is read once, from KV afterwards");
    assert.equal(counts.get("/"), 1, "the crawl did not start again from page one");

    // Same findings as an uninterrupted audit of the same site.
    const interrupted = await findingsOf(s, key, auditId);
    const other = await newProject(s, key, site.origin);
    const again = await s.req("POST", `/v1/projects/${other}/audits`, { key });
    await waitForAudit(s, key, again.body.audit_id, {
      ...CHILD_POLL,
      timeoutMs: 60_000,
      until: ["completed"],
    });
    const clean = await findingsOf(s, key, again.body.audit_id);
    assert.deepEqual(interrupted, clean);
    assert.ok("title_missing" in clean && "broken_internal_links" in clean);

    // Charged once per audit (two audits: 50 of 500), the killed one counted one restart.
    const credits = await s.req("GET", "/v1/credits", { key });
    assert.equal(credits.body.balance_credits, 450);
    await s.stop();
    const kv2 = await openTestKv(kvFile.path);
    const rec = (await kv2.get<{ attempts: number }>(keys.audit(accountId, auditId))).value!;
    kv2.close();
    assert.equal(rec.attempts, 2);
  } finally {
    await killAll(first, second);
    await site.close();
    await kvFile.remove();
  }
});
