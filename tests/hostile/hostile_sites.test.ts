/**
 * Hostile sites, audited over HTTP with a free sandbox key: each audit ends (completed, its caps
 * reported in `limits_hit`), the crawl's stored state stays within its caps, and another
 * account's requests are answered throughout. Timing is the benchmarks' business
 * (tests/bench/hostile_bench.ts); these tests assert what the caps let through.
 */
import assert from "node:assert/strict";
import { keys } from "../../kv/keys.ts";
import type { CrawlState } from "../../domain/audit_engine/crawl/state.ts";
import { type TestApp, withApp } from "../helpers/app.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { type Route, serveSite } from "../helpers/sites.ts";

const HTML = { "content-type": "text/html; charset=utf-8" };

/**
 * Audits `origin` with a fresh sandbox key while another account reads its own account in a
 * loop; returns the finished audit, its crawl state and the other account's answers.
 */
async function auditWhileOthersRead(app: TestApp, origin: string) {
  const { key } = await app.signup();
  const other = await app.signup();
  const proj = await app.req("POST", "/v1/projects", { key, body: { url: origin } });
  assert.equal(proj.status, 201, proj.text);
  const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
  assert.equal(started.status, 202, started.text);
  const auditId = started.body.audit_id;
  let running = true;
  const statuses: number[] = [];
  const reader = (async () => {
    while (running) {
      statuses.push((await app.req("GET", "/v1/account", { key: other.key })).status);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    const done = await waitForAudit(app, key, auditId, { timeoutMs: 120_000 });
    return {
      done,
      state: (await app.kv.get<CrawlState>(keys.auditCrawl(auditId))).value!,
      statuses,
    };
  } finally {
    running = false;
    await reader;
  }
}

function hit(done: { body: { limits_hit: { limit: string; left_out: number; value: number }[] } }) {
  return new Map(done.body.limits_hit.map((h) => [h.limit, h]));
}

function page(title: string, body: string): Route {
  return {
    headers: HTML,
    body: `<!doctype html><html lang="en"><head><title>${title}</title></head><body>${body}` +
      `</body></html>`,
  };
}

Deno.test("link bomb: 30,000 links a page are capped per page and in the frontier", async () => {
  const LINKS = 30_000;
  const site = serveSite((p) => {
    const m = /^\/(?:p\/(\d+)(?:\/\d+)?)?$/.exec(p);
    if (!m) return undefined;
    const n = Number(m[1] ?? 0);
    let links = "";
    for (let i = 0; i < LINKS; i++) links += `<a href="/p/${n + 1}/${i}">x</a>`;
    return page(`Page ${p}`, links);
  });
  try {
    await withApp(async (app) => {
      const { done, state, statuses } = await auditWhileOthersRead(app, site.origin);
      assert.equal(done.body.status, "completed", done.text);
      const hits = hit(done);
      const perPage = hits.get("links_per_page");
      assert.ok(perPage, done.text);
      assert.equal(perPage.value, 1_000);
      assert.ok(perPage.left_out >= 29_000, `left out ${perPage.left_out}`);
      const frontier = hits.get("frontier");
      assert.ok(frontier && frontier.left_out > 0, done.text);
      // The frontier never passed its cap (sandbox: 25 pages, 500 positions at least).
      assert.ok(state.tail <= frontier.value, `tail ${state.tail} cap ${frontier.value}`);
      assert.ok(state.fetches <= 25);
      // The true number of links is still recorded on the page inventory.
      const pages = await app.req("GET", `/v1/audits/${done.body.audit_id}/pages?limit=5`, {
        key: (await app.signup()).key,
      });
      assert.equal(pages.status, 404, "another account does not see the inventory");
      assert.ok(statuses.length > 0 && statuses.every((s) => s === 200), String(statuses));
    }, { env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  } finally {
    await site.close();
  }
});

Deno.test("byte bomb: the byte budget holds before each fetch, robots and sitemap count", async () => {
  const BUDGET = 1024 * 1024;
  const big = "x".repeat(600 * 1024);
  const sitemapBody = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/` +
    `sitemap/0.9">${"<url><loc>/nowhere</loc></url>".repeat(4_000)}</urlset>`;
  let origin = "";
  const site = serveSite((p) => {
    if (p === "/robots.txt") {
      return { headers: { "content-type": "text/plain" }, body: `User-agent: *\nAllow: /\n` };
    }
    if (p === "/sitemap.xml") {
      return { headers: { "content-type": "application/xml" }, body: sitemapBody };
    }
    const m = /^\/(?:b\/(\d+))?$/.exec(p);
    if (!m) return undefined;
    const n = Number(m[1] ?? 0);
    return page(
      `Big ${n}`,
      `<a href="${origin}/b/${n + 1}">next</a><a href="/b/${n + 2}">skip</a><p>${big}</p>`,
    );
  });
  origin = site.origin;
  try {
    await withApp(async (app) => {
      const { done, state, statuses } = await auditWhileOthersRead(app, site.origin);
      assert.equal(done.body.status, "completed", done.text);
      assert.ok(state.bytes <= BUDGET, `read ${state.bytes} bytes of a ${BUDGET} budget`);
      // The sitemap's bytes counted beside the first page, read whole.
      assert.ok(state.bytes >= sitemapBody.length + big.length, `read ${state.bytes}`);
      const bytes = hit(done).get("bytes");
      assert.ok(bytes && bytes.value === BUDGET && bytes.left_out > 0, done.text);
      // Only the first page fit whole; the next one, cut by the budget, is not judged as fetched.
      assert.equal(state.fetches, 1, `fetched ${state.fetches}`);
      assert.ok(statuses.every((s) => s === 200), String(statuses));
    }, { env: { SANDBOX_CRAWL_MAX_BYTES: String(BUDGET), RATE_LIMIT_PER_MINUTE: "100000" } });
  } finally {
    await site.close();
  }
});

Deno.test("infinite calendar: the frontier stops at its cap, the crawl at its budget", async () => {
  const site = serveSite((p) => {
    const m = /^\/(?:cal\/(\d+))?$/.exec(p);
    if (!m) return undefined;
    const day = Number(m[1] ?? 0);
    let links = "";
    for (let d = 1; d <= 60; d++) links += `<a href="/cal/${day * 61 + d}">day</a>`;
    return page(`Day ${day}`, links);
  });
  try {
    await withApp(async (app) => {
      const { done, state } = await auditWhileOthersRead(app, site.origin);
      assert.equal(done.body.status, "completed", done.text);
      const frontier = hit(done).get("frontier");
      assert.ok(frontier, done.text);
      assert.equal(frontier.value, 500);
      assert.equal(state.tail, 500);
      assert.ok(state.fetches <= 25);
    }, { env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  } finally {
    await site.close();
  }
});

Deno.test("redirect maze: hops past the cap are not followed and are reported", async () => {
  const site = serveSite((p) => {
    if (p === "/") return page("Maze", `<a href="/r/0">enter</a>`);
    const m = /^\/r\/(\d+)$/.exec(p);
    if (!m) return undefined;
    return { status: 302, headers: { location: `/r/${Number(m[1]) + 1}` }, body: "" };
  });
  try {
    await withApp(async (app) => {
      const { done, state } = await auditWhileOthersRead(app, site.origin);
      assert.equal(done.body.status, "completed", done.text);
      const hops = hit(done).get("redirect_hops");
      assert.ok(hops && hops.value === 3 && hops.left_out === 1, done.text);
      // The page, then /r/0 (linked) and three hops after it.
      assert.equal(state.fetches, 5);
      assert.ok(site.hits.includes("/r/3") && !site.hits.includes("/r/4"), String(site.hits));
    }, { env: { CRAWL_MAX_REDIRECT_HOPS: "3", RATE_LIMIT_PER_MINUTE: "100000" } });
  } finally {
    await site.close();
  }
});

Deno.test("gzip bomb sitemap: inflated text past its cap is cut and reported", async () => {
  // About 64 MiB of sitemap text in a gzip of well under 1 MiB.
  const entry = "<url><loc>/x</loc></url>";
  const chunk = new TextEncoder().encode(entry.repeat(40_000));
  const parts: Uint8Array[] = [];
  const stream = new Blob([
    new TextEncoder().encode(
      `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`,
    ),
    ...Array.from({ length: 70 }, () => chunk),
  ]).stream().pipeThrough(new CompressionStream("gzip"));
  for await (const p of stream) parts.push(p);
  const gz = new Uint8Array(await new Blob(parts as BlobPart[]).arrayBuffer());
  assert.ok(gz.byteLength < 1024 * 1024, `gzip is ${gz.byteLength} bytes`);
  const site = serveSite((p) => {
    if (p === "/robots.txt") {
      return {
        headers: { "content-type": "text/plain" },
        body: `User-agent: *\nAllow: /\nSitemap: ${site.origin}/sitemap.xml.gz\n`,
      };
    }
    if (p === "/sitemap.xml.gz") {
      return { headers: { "content-type": "application/gzip" }, body: gz, noCompress: true };
    }
    if (p === "/") return page("Home", `<p>home</p>`);
    return undefined;
  });
  try {
    await withApp(async (app) => {
      const { done, statuses } = await auditWhileOthersRead(app, site.origin);
      assert.equal(done.body.status, "completed", done.text);
      const cut = hit(done).get("sitemap_bytes");
      assert.ok(cut && cut.value === 2 * 1024 * 1024 && cut.left_out === 1, done.text);
      assert.ok(statuses.every((s) => s === 200), String(statuses));
    }, {
      env: {
        CRAWL_SITEMAP_MAX_BYTES: String(2 * 1024 * 1024),
        SANDBOX_CRAWL_MAX_BYTES: String(8 * 1024 * 1024),
        RATE_LIMIT_PER_MINUTE: "100000",
      },
    });
  } finally {
    await site.close();
  }
});

Deno.test("robots.txt bomb: 500 KiB of wildcard rules are capped and reported", async () => {
  const line = `Disallow: /${"*a".repeat(19)}*b\n`;
  let robots = "User-agent: *\n";
  while (robots.length + line.length <= 500 * 1024) robots += line;
  const rules = robots.split("\n").length - 2;
  const long = "a".repeat(1_400);
  const site = serveSite((p) => {
    if (p === "/robots.txt") return { headers: { "content-type": "text/plain" }, body: robots };
    const m = /^\/(?:a+(\d+))?$/.exec(p);
    if (!m) return undefined;
    const n = Number(m[1] ?? 0);
    let links = "";
    for (let i = 1; i <= 40; i++) links += `<a href="/${long}${n * 41 + i}">x</a>`;
    return page(`Robots bomb ${n}`, links);
  });
  try {
    await withApp(async (app) => {
      const { done, state, statuses } = await auditWhileOthersRead(app, site.origin);
      assert.equal(done.body.status, "completed", done.text);
      const dropped = hit(done).get("robots_wildcard_rules");
      assert.ok(dropped && dropped.value === 500 && dropped.left_out === rules - 500, done.text);
      // The long URLs carry no `b`: none is blocked, all are crawled up to the budget.
      assert.equal(state.fetches, 25);
      assert.ok(statuses.every((s) => s === 200), String(statuses));
    }, { env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  } finally {
    await site.close();
  }
});
