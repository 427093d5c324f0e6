/**
 * Incremental crawls (issue 32 item 3): a project's second audit asks with `If-None-Match` /
 * `If-Modified-Since` and reuses the stored facts of a 304 or of an unchanged body, so it fetches
 * far fewer bytes, and its findings are those of a full audit of the changed site on a fresh
 * project. A page whose ETag changed is fetched again; pages of a server that ignores validators
 * (always 200) are reused by their body's digest. The older audit's stored facts are pruned once
 * the newer one completes.
 */
import assert from "node:assert/strict";
import {
  markForPruning,
  PRUNE_GRACE_MS,
  pruneFinishedAudits,
} from "../../domain/audit_engine/prune.ts";
import { keys } from "../../kv/keys.ts";
import { type TestApp, withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { openTestKv } from "../helpers/kv.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import {
  GOOD_HEADERS,
  isAgentProbe,
  page,
  robotsRoute,
  type Route,
  serveSite,
} from "../helpers/sites.ts";

async function count(kv: Deno.Kv, prefix: Deno.KvKey): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix })) n++;
  return n;
}

async function walk(app: TestApp, key: string, path: string) {
  // deno-lint-ignore no-explicit-any
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const res = await app.req("GET", `${path}${sep}limit=50${cursor ? `&cursor=${cursor}` : ""}`, {
      key,
    });
    assert.equal(res.status, 200, res.text);
    all.push(...res.body.data);
    cursor = res.body.next_cursor;
  } while (cursor !== null);
  return all;
}

/** Fields that differ between any two audits whatever they found (ids, times, comparisons). */
const VOLATILE = new Set([
  "audit_id",
  "project_id",
  "previous_audit_id",
  "change",
  "changes",
  "ttfb_ms",
  "response_time_ms",
  "started_at",
  "completed_at",
  "pages_reused",
]);

function normalized(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalized);
  if (v && typeof v === "object") {
    return Object.fromEntries(
      Object.entries(v).filter(([k]) => !VOLATILE.has(k)).map(([k, x]) => [k, normalized(x)]),
    );
  }
  return typeof v === "string" ? v.replace(/aud_[0-9a-z]+/g, "aud_") : v;
}

/** What the API serves about an audit's findings: score, summary, issues, evidence, pages. */
async function findings(app: TestApp, key: string, auditId: string) {
  const base = `/v1/audits/${auditId}`;
  const audit = (await app.req("GET", base, { key })).body;
  // An issue the previous audit had and this one fixed is listed with no pages: history, not a
  // finding of this crawl.
  const issues = (await walk(app, key, `${base}/issues`)).filter((i) => i.affected_count > 0);
  const items: Record<string, unknown> = {};
  for (const i of issues) items[i.check] = await walk(app, key, `${base}/issues/${i.check}`);
  const pages = await walk(app, key, `${base}/pages`);
  return normalized({
    score: audit.score,
    summary: audit.summary,
    limits_hit: audit.limits_hit,
    issues,
    items,
    pages,
  });
}

/** A site whose pages can change; it counts the HTML bytes it sends and how it answered. */
function changingSite() {
  const changed = new Set<string>();
  const log: { path: string; status: number; bytes: number }[] = [];
  const steady = Array.from({ length: 8 }, (_, i) => `/g${i}`); // never change
  const validated = ["/a", "/b", "/c", "/d", "/e", "/f", ...steady];
  const plain = ["/n1", "/n2"]; // no ETag, no Last-Modified, always 200
  // Facts too large for one KV value (80 distinct canonical hrefs of 1,000 characters each).
  const canonicals = Array.from(
    { length: 80 },
    (_, i) => `<link rel="canonical" href="/big?${String(i).padStart(1000, "x")}">`,
  ).join("");
  const bodyOf = (path: string): string | null => {
    const v2 = changed.has(path);
    switch (path) {
      case "/":
        return page({
          title: "Home of the changing site",
          links: [...validated, ...plain, "/big"],
        });
      case "/g0":
      case "/g1":
      case "/g2":
      case "/g3":
      case "/g4":
      case "/g5":
      case "/g6":
      case "/g7":
        return page({ title: `Steady page ${path} of the site`, key: path, links: ["/a"] });
      case "/big":
        return page({ title: "A page with too many canonicals", key: "big", head: canonicals });
      case "/a":
        return page({ title: "Page a of the changing site", key: "a", links: ["/b"] });
      case "/b":
        return page({ title: "Page b of the changing site", key: v2 ? "b2" : "b", links: ["/"] });
      case "/c": // no description; X-Robots-Tag nofollow: its link is never followed
        return page({
          title: "Page c of the changing site",
          key: "c",
          description: null,
          links: ["/hidden"],
        });
      case "/hidden":
        return page({ title: "Linked only from a nofollow page", key: "hidden" });
      case "/d": // d and e share a title until e changes
        return page({ title: "A shared title of two pages", key: "d" });
      case "/e":
        return page({
          title: v2 ? "Page e, now titled apart" : "A shared title of two pages",
          key: "e",
        });
      case "/f": // a broken link appears when it changes
        return page({ title: "Page f of the changing site", key: "f", links: v2 ? ["/gone"] : [] });
      case "/n1":
        return page({ title: "Plain page one of the site", key: "n1", links: ["/c"] });
      case "/n2":
        return page({
          title: v2 ? "Plain page two, changed" : "Plain page two of the site",
          key: "n2",
        });
    }
    return null;
  };
  const route = (path: string): Route | undefined => {
    if (path === "/robots.txt") return robotsRoute("User-agent: *\nAllow: /\n");
    const body = bodyOf(path);
    if (body === null) return undefined;
    return {
      handler: async (req) => {
        // The agents category's bot probes ask a page or two as each bot class: not the crawl's.
        const probe = isAgentProbe(req.headers.get("user-agent"));
        const note = (e: { path: string; status: number; bytes: number }) => {
          if (!probe) log.push(e);
        };
        const headers = new Headers(GOOD_HEADERS);
        if (path === "/c") headers.set("x-robots-tag", "nofollow");
        if (!plain.includes(path)) {
          const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(body));
          const etag = `"${btoa(String.fromCharCode(...new Uint8Array(digest))).slice(0, 16)}"`;
          headers.set("etag", etag);
          headers.set("last-modified", "Tue, 03 Nov 2026 10:00:00 GMT");
          if (req.headers.get("if-none-match") === etag) {
            note({ path, status: 304, bytes: 0 });
            return new Response(null, { status: 304, headers: { etag } });
          }
        }
        const bytes = new TextEncoder().encode(body);
        note({ path, status: 200, bytes: bytes.byteLength });
        return new Response(bytes, { headers });
      },
    };
  };
  return { site: serveSite(route), changed, log, validated, plain };
}

Deno.test("a re-audit reuses unchanged pages (304 and same body) and finds what a full audit finds", () =>
  withApp(async (app) => {
    const { site, changed, log } = changingSite();
    try {
      const { live: key } = await liveWithCredits(app, 100);
      const audit = async (projectId: string, body?: unknown) => {
        const res = await app.req("POST", `/v1/projects/${projectId}/audits`, { key, body });
        assert.equal(res.status, 202, res.text);
        const done = await waitForAudit(app, key, res.body.audit_id);
        assert.equal(done.body.status, "completed", done.text);
        return done.body;
      };
      // HTML bytes of the pages that can be reused (/big is always sent whole: it stores nothing).
      const bytes = (from: number) =>
        log.slice(from).filter((e) => e.path !== "/big").reduce((n, e) => n + e.bytes, 0);
      const p1 = (await app.req("POST", "/v1/projects", { key, body: { url: site.origin } })).body;

      const first = await audit(p1.project_id);
      assert.equal(first.crawl.pages_reused, 0, "nothing stored before the first audit");
      assert.equal(first.crawl.pages_fetched, 18);
      const fullBytes = bytes(0);
      assert.ok(
        await count(app.kv, keys.pageReuseAll(first.audit_id)) === 17,
        "every HTML page stored its facts but the one whose facts pass KV's value limit",
      );

      // Four pages change: b (new text, new ETag), e (its title), f (a link), n2 (no validators).
      changed.add("/b").add("/e").add("/f").add("/n2");
      const mark = log.length;
      const second = await audit(p1.project_id);
      const answers = log.slice(mark);
      const statusOf = (p: string) => answers.filter((e) => e.path === p).map((e) => e.status);
      assert.deepEqual(statusOf("/a"), [304], "an unchanged page answers 304");
      assert.deepEqual(statusOf("/c"), [304]);
      assert.deepEqual(statusOf("/hidden"), [], "a reused page's stored headers still apply");
      assert.deepEqual(statusOf("/b"), [200], "a page whose ETag changed is fetched again");
      assert.deepEqual(statusOf("/n1"), [200], "a server ignoring validators still answers 200");
      assert.deepEqual(statusOf("/big"), [200], "a page that stored nothing is fetched in full");
      // Reused: /, a, c, d, g0-g7 (304) and n1 (same body); fetched: b, e, f, n2, big and /gone.
      assert.equal(second.crawl.pages_reused, 13);
      assert.equal(second.crawl.pages_fetched, 19);
      const incBytes = bytes(mark);
      assert.ok(
        incBytes < fullBytes * 0.4,
        `incremental ${incBytes} bytes, full ${fullBytes}`,
      );

      // The same site, audited in full on a fresh project, finds exactly the same.
      const p2 = (await app.req("POST", "/v1/projects", { key, body: { url: site.origin } })).body;
      const fresh = await audit(p2.project_id);
      assert.equal(fresh.crawl.pages_reused, 0);
      const inc = await findings(app, key, second.audit_id);
      assert.deepEqual(inc, await findings(app, key, fresh.audit_id));
      // The change showed: the duplicate title is gone and the broken link found.
      const checks = (inc as { issues: { check: string }[] }).issues.map((i) => i.check);
      assert.ok(checks.includes("broken_internal_links"), checks.join());
      assert.ok(checks.includes("meta_description_missing"), checks.join());
      assert.ok(!checks.includes("title_duplicate"), checks.join());

      // Another User-Agent is another view of the site: nothing is asked conditionally or reused.
      const before = log.length;
      const asBot = await audit(p1.project_id, { user_agent: "googlebot_desktop" });
      assert.equal(asBot.crawl.pages_reused, 0);
      assert.ok(log.slice(before).every((e) => e.status === 200 || e.path === "/gone"));

      // Only each project's latest completed audit keeps its facts: the older go with the sweep.
      const later = { kv: app.kv, clock: { now: () => app.clock.now() + PRUNE_GRACE_MS + 10 } };
      while (await count(app.kv, keys.auditPrunesDue()) > 0) await pruneFinishedAudits(later);
      assert.equal(await count(app.kv, keys.pageReuseAll(first.audit_id)), 0);
      assert.equal(await count(app.kv, keys.pageReuseAll(second.audit_id)), 0);
      assert.equal(await count(app.kv, keys.pageReuseAll(asBot.audit_id)), 17, "p1's latest kept");
      assert.equal(await count(app.kv, keys.pageReuseAll(fresh.audit_id)), 17, "p2's latest kept");
    } finally {
      await site.close();
    }
  }));

Deno.test("a `reuse` prune marker deletes only stored facts; a failed audit loses them with its pages", async () => {
  const kv = await openTestKv();
  try {
    const entry = (url: string) => ({ h: "digest", s: 200, hd: [], b: 1, f: { url } });
    for (const id of ["aud_older", "aud_failed"]) {
      const op = kv.atomic();
      for (const u of ["https://s.test/", "https://s.test/a"]) {
        op.set(keys.pageReuse(id, u), entry(u)).set(keys.auditPage(id, u), { url: u });
      }
      await op.commit();
    }
    const op = kv.atomic();
    markForPruning(op, "aud_older", "reuse", 0);
    markForPruning(op, "aud_failed", "failed", 0);
    await op.commit();
    const later = { kv, clock: { now: () => PRUNE_GRACE_MS + 1 } };
    assert.equal(await pruneFinishedAudits(later), 2);
    assert.equal(await count(kv, keys.pageReuseAll("aud_older")), 0);
    assert.equal(await count(kv, keys.auditPages("aud_older")), 2, "its pages are still served");
    assert.equal(await count(kv, keys.pageReuseAll("aud_failed")), 0);
    assert.equal(await count(kv, keys.auditPages("aud_failed")), 0);
    assert.equal(await count(kv, keys.auditPrunesDue()), 0);
  } finally {
    kv.close();
  }
});

Deno.test("CRAWL_INCREMENTAL=0: audits store no facts and ask for nothing conditionally", () =>
  withApp(async (app) => {
    const { site, log } = changingSite();
    try {
      const { live: key } = await liveWithCredits(app, 100);
      const p = (await app.req("POST", "/v1/projects", { key, body: { url: site.origin } })).body;
      for (let i = 0; i < 2; i++) {
        const res = await app.req("POST", `/v1/projects/${p.project_id}/audits`, { key });
        const done = (await waitForAudit(app, key, res.body.audit_id)).body;
        assert.equal(done.status, "completed", JSON.stringify(done));
        assert.equal(done.crawl.pages_reused, 0);
        assert.equal(await count(app.kv, keys.pageReuseAll(done.audit_id)), 0);
      }
      assert.ok(log.length > 0 && log.every((e) => e.status === 200));
      assert.equal((await app.kv.get(keys.reuseBase(p.project_id))).versionstamp, null);
    } finally {
      await site.close();
    }
  }, { env: { CRAWL_INCREMENTAL: "0" } }));
