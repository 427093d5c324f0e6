/**
 * The crawl honours the audit options (issue 22): include/exclude path globs, max_depth, list
 * mode, sitemap-only mode and the User-Agent presets, on a fixture site that records which paths
 * were fetched and with which User-Agent.
 */
import { BOT_CLASSES, DISCOVERY_DOCUMENTS } from "../../domain/audit_engine/checks/agents.ts";
import { probeUserAgent } from "../../domain/audit_engine/crawl/agent_probes.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { compileTokens, type GlobToken, matchGlob } from "../../domain/audit_engine/glob_match.ts";
import {
  compileGlob,
  globMatches,
  patternProblem,
  tokenize,
} from "../../domain/audit_engine/scope.ts";
import { crawlerIdentity } from "../../domain/audit_engine/user_agents.ts";
import { auditSite } from "./audit_site.ts";
import { GOOD_HEADERS, html, page, type Route } from "../helpers/sites.ts";

/** Files the crawl reads for its site-wide checks, whatever the scope. */
const SITE_FILES = new Set([
  "/robots.txt",
  "/sitemap.xml",
  "/llms.txt",
  "/llms-full.txt",
  ...Object.values(DISCOVERY_DOCUMENTS),
]);
/**
 * The agents probes' User-Agents (crawl/agent_probes.ts): each bot class's token and a browser,
 * sent on purpose beside the preset's (docs/audit.md, the access matrix).
 */
const PROBE_AGENTS = new Set([
  probeUserAgent(null),
  ...Object.values(BOT_CLASSES).flat().map((t) => probeUserAgent(t)),
]);
const crawlAgents = (agents: string[]) => agents.filter((a) => !PROBE_AGENTS.has(a));

/**
 * The site: / links /a, /blog/x, /private/y and /deep1 (→ /deep2 → /deep3); /a links /a/b; the
 * sitemap lists /, /a, /blog/x and /only-in-sitemap; robots.txt keeps Googlebot out of /a.
 * Every request's User-Agent is recorded in `agents`.
 */
function site(agents: string[], robots?: string) {
  return (o: string): Record<string, Route> => {
    const routes: Record<string, Route> = {
      "/": html(page({
        title: "Home of the scoped site",
        key: "home",
        links: [o + "/a", o + "/blog/x", o + "/private/y", o + "/deep1"],
      })),
      "/a": html(page({ title: "Page A of the scoped site", key: "a", links: [o + "/a/b"] })),
      "/a/b": html(page({ title: "Page A/B of the scoped site", key: "ab" })),
      "/blog/x": html(page({ title: "Blog post X of the site", key: "x", links: [o + "/"] })),
      "/private/y": html(page({ title: "Private page Y of the site", key: "y" })),
      "/deep1": html(
        page({ title: "Deep page one of the site", key: "d1", links: [o + "/deep2"] }),
      ),
      "/deep2": html(
        page({ title: "Deep page two of the site", key: "d2", links: [o + "/deep3"] }),
      ),
      "/deep3": html(page({ title: "Deep page three of the site", key: "d3" })),
      "/only-in-sitemap": html(page({ title: "A page only the sitemap lists", key: "s" })),
      "/robots.txt": {
        headers: { "content-type": "text/plain" },
        body: robots ??
          `User-agent: Googlebot\nDisallow: /a\n\nUser-agent: *\nAllow: /\n\nSitemap: ${o}/sitemap.xml\n`,
      },
      "/sitemap.xml": {
        headers: { "content-type": "application/xml" },
        body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${
          ["/", "/a", "/blog/x", "/only-in-sitemap"].map((p) =>
            `<url><loc>${o}${p}</loc></url>`
          )
            .join("\n")
        }
</urlset>`,
      },
    };
    // Record every request's User-Agent.
    for (const [path, r] of Object.entries(routes)) {
      routes[path] = {
        handler: (req) => {
          agents.push(req.headers.get("user-agent") ?? "");
          return new Response(r.body ?? null, {
            status: r.status ?? 200,
            headers: r.headers ?? GOOD_HEADERS,
          });
        },
      };
    }
    return routes;
  };
}

/** The pages (not site files) the crawl fetched, sorted. */
const pagesFetched = (hits: string[]) =>
  [...new Set(hits.filter((h) => !SITE_FILES.has(h)))].sort();

Deno.test("globs: * stays in a segment, ** crosses them, /x/** also matches /x, ? means the query", () => {
  const m = (pattern: string, url: string) =>
    globMatches(compileGlob(pattern), new URL(url, "https://example.com"));
  assert.equal(m("/blog/**", "/blog"), true);
  assert.equal(m("/blog/**", "/blog/"), true);
  assert.equal(m("/blog/**", "/blog/2024/post"), true);
  assert.equal(m("/blog/**", "/blogger"), false);
  assert.equal(m("/blog/*", "/blog/2024/post"), false);
  assert.equal(m("/blog/*", "/blog/post"), true);
  assert.equal(m("/*/edit", "/page/edit"), true);
  assert.equal(m("/**/edit", "/a/b/c/edit"), true);
  assert.equal(m("/**.pdf", "/docs/a/file.pdf"), true);
  assert.equal(m("/tag/*", "/tag/x?page=2"), true, "the query is not part of a path pattern");
  assert.equal(m("/search?*", "/search?q=1"), true);
  assert.equal(m("/search?*", "/search"), false);
  assert.equal(m("/caf\u00e9/**", "/caf%C3%A9/menu"), true, "non-ASCII as UTF-8 octets");
  assert.equal(m("/x", "/x/"), false, "anchored at both ends");
  // Hostile: many wildcards against a long path of one letter answers without backtracking.
  const hostile = "/" + "*a".repeat(10);
  assert.equal(patternProblem(hostile), null);
  assert.equal(m(hostile, "/" + "a".repeat(1400) + "b"), false);
  assert.match(patternProblem("/" + "*a".repeat(11))!, /at most 10 wildcards/);
  assert.match(patternProblem("blog/**")!, /start with \//);
  assert.match(patternProblem("/a b")!, /whitespace/);
  assert.match(patternProblem("/" + "a".repeat(200))!, /at most 200 characters/);
});

/**
 * The reference matcher: the set of path positions reachable after each token (a position-set
 * automaton, obviously right and slower), against which the segment-greedy matcher is checked.
 */
function reference(tokens: GlobToken[], subject: string): boolean {
  const n = subject.length;
  let cur = new Uint8Array(n + 1);
  cur[0] = 1;
  for (const t of tokens) {
    const next = new Uint8Array(n + 1);
    if ("lit" in t) {
      for (let p = 0; p + t.lit.length <= n; p++) {
        if (cur[p] && subject.startsWith(t.lit, p)) next[p + t.lit.length] = 1;
      }
    } else {
      let active = false;
      for (let q = 0; q <= n; q++) {
        if (cur[q]) active = true;
        if (active) next[q] = 1;
        if ("star" in t && q < n && subject[q] === "/") active = false;
      }
    }
    cur = next;
  }
  return cur[n] === 1;
}

Deno.test("globs: the segment-greedy matcher agrees with a position-set automaton on random input", () => {
  // Small alphabets make matches (and near misses) common.
  const pathChar = fc.constantFrom("a", "b", "/", "ab");
  const patChar = fc.constantFrom("a", "b", "/", "*", "**", "ab", "/*", "*/");
  fc.assert(
    fc.property(
      fc.array(patChar, { maxLength: 12 }).map((p) => "/" + p.join("")),
      fc.array(pathChar, { maxLength: 16 }).map((p) => "/" + p.join("")),
      (pattern, path) => {
        const tokens = tokenize(pattern);
        assert.equal(
          matchGlob(compileTokens(tokens), path.split("/")),
          reference(tokens, path),
          `${pattern} on ${path}`,
        );
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("exclude: matching URLs are not fetched, links to them are not broken, left_out counted", async () => {
  const agents: string[] = [];
  const out = await auditSite(site(agents), { scope: { exclude: ["/private/**", "/deep*"] } });
  const fetched = pagesFetched(out.hits);
  assert.ok(!fetched.includes("/private/y"), fetched.join());
  assert.ok(!fetched.some((p) => p.startsWith("/deep")), fetched.join());
  assert.ok(fetched.includes("/only-in-sitemap"), "sitemap URLs in scope are still crawled");
  assert.equal(out.fired.get("broken_internal_links"), undefined);
  assert.equal(out.fired.get("orphan_page"), undefined, "a scoped link graph proves no orphan");
  assert.ok((out.outcome.scopeLeftOut?.exclude ?? 0) >= 2, JSON.stringify(out.outcome));
});

Deno.test("include: only matching URLs besides the start page; exclude wins over include", async () => {
  const agents: string[] = [];
  const out = await auditSite(site(agents), {
    scope: { include: ["/blog/**", "/a/**"], exclude: ["/a/b"] },
  });
  assert.deepEqual(pagesFetched(out.hits), ["/", "/a", "/blog/x"]);
  assert.ok((out.outcome.scopeLeftOut?.include ?? 0) >= 2);
  assert.equal(out.outcome.scopeLeftOut?.exclude, 1);
});

Deno.test("max_depth: no page deeper than the limit, and no sitemap-only URL", async () => {
  const agents: string[] = [];
  const zero = await auditSite(site(agents), { scope: { maxDepth: 0 } });
  assert.deepEqual(pagesFetched(zero.hits), ["/"]);
  const one = await auditSite(site(agents), { scope: { maxDepth: 1 } });
  assert.deepEqual(pagesFetched(one.hits), ["/", "/a", "/blog/x", "/deep1", "/private/y"]);
  assert.ok((one.outcome.scopeLeftOut?.max_depth ?? 0) >= 3, "deep2, a/b, only-in-sitemap");
});

Deno.test("sitemap_only: the start page and the sitemap's URLs, nothing else", async () => {
  const agents: string[] = [];
  const out = await auditSite(site(agents), { scope: { sitemapOnly: true } });
  assert.deepEqual(pagesFetched(out.hits), ["/", "/a", "/blog/x", "/only-in-sitemap"]);
  assert.ok((out.outcome.scopeLeftOut?.sitemap_only ?? 0) >= 3);
});

Deno.test("list mode: exactly the listed URLs, the start page only when listed, no link followed", async () => {
  const agents: string[] = [];
  const out = await auditSite(site(agents), (o) => ({ scope: { urls: [o + "/deep3", o + "/a"] } }));
  assert.deepEqual(pagesFetched(out.hits), ["/a", "/deep3"]);
  assert.ok((out.outcome.scopeLeftOut?.urls ?? 0) >= 1, "the link /a holds was not followed");
  assert.equal(out.fired.get("home_page_error"), undefined, "the start page was not asked for");
  assert.equal(out.fired.get("orphan_page"), undefined);
  assert.equal(out.report.pages_crawled, 2);
});

Deno.test("user_agent: the preset's token in an honest User-Agent, robots.txt read for that token", async () => {
  const ours: string[] = [];
  const plain = await auditSite(site(ours), { scope: { maxDepth: 1 } });
  assert.ok(pagesFetched(plain.hits).includes("/a"), "robots.txt keeps only Googlebot out of /a");
  const crawl = crawlAgents(ours);
  assert.ok(crawl.length > 0 && crawl.every((a) => a === crawlerIdentity().userAgent), crawl[0]);
  assert.ok(crawl.every((a) => !a.includes("Googlebot")));

  const google: string[] = [];
  const g = await auditSite(site(google), {
    scope: { maxDepth: 1 },
    userAgent: "googlebot_smartphone",
  });
  assert.ok(!pagesFetched(g.hits).includes("/a"), "Googlebot's group disallows /a");
  assert.equal(g.fired.get("blocked_by_robots"), 1);
  for (const a of crawlAgents(google)) {
    assert.match(a, /Googlebot\/2\.1/);
    assert.match(a, /SerpwrightBot\/1\.0; \+https:\/\/serpwright\.com\/bot/);
    assert.match(a, /Mobile/);
  }
  // Every request of the crawl, robots.txt and the sitemap included, says the same (404s are
  // not recorded); the agents probes ask as each bot class, on purpose.
  const served = g.hits.filter((h) =>
    h !== "/llms.txt" && h !== "/llms-full.txt" && !h.startsWith("/.well-known/")
  );
  assert.ok(served.includes("/robots.txt") && served.includes("/sitemap.xml"));
  assert.equal(crawlAgents(google).length, served.length);
  assert.ok(g.probeHits.length > 0, "the agents probes asked as the bot classes");

  const bing: string[] = [];
  const b = await auditSite(site(bing), { scope: { maxDepth: 1 }, userAgent: "bingbot" });
  assert.ok(pagesFetched(b.hits).includes("/a"), "bingbot falls back to the * group");
  assert.ok(
    crawlAgents(bing).every((a) => a.includes("bingbot/2.0") && a.includes("SerpwrightBot")),
  );
  assert.ok(bing.every((a) => a.includes("SerpwrightBot")), "every request names us");
});

Deno.test("user_agent: a start URL disallowed for the preset's token is crawler_blocked, naming it", async () => {
  const agents: string[] = [];
  const robots = "User-agent: Googlebot\nDisallow: /\n\nUser-agent: *\nAllow: /\n";
  const g = await auditSite(site(agents, robots), { userAgent: "googlebot_desktop" });
  assert.equal(g.fired.get("crawler_blocked"), 1);
  assert.equal(g.findings.get("crawler_blocked")?.[0]?.user_agent, "Googlebot");
  assert.deepEqual(pagesFetched(g.hits), []);
  const plain = await auditSite(site(agents, robots), { scope: { maxDepth: 0 } });
  assert.equal(plain.fired.get("crawler_blocked"), undefined);
  assert.deepEqual(pagesFetched(plain.hits), ["/"]);
});
