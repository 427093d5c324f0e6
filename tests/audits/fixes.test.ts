/**
 * Fixes an agent can apply, over HTTP: a shop fixture with each kind of defect (missing and
 * shared titles and descriptions, a link into a redirect, broken links one of which carries `;`,
 * quotes and braces, a canonical and an hreflang alternate that redirect, a sitemap entry that
 * redirects and pages no sitemap lists) gets a proposal for each; the redirect map downloads as
 * nginx and Apache files, parsed back here by strict parsers; the test applies every fix to the
 * fixture, and the re-checks mark each item fixed, and a new audit finds none of those checks.
 */
import assert from "node:assert/strict";
import { type TestApp, withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { pollUntil, waitForAudit } from "../helpers/jobs.ts";
import { html, page, type Route, serveSite } from "../helpers/sites.ts";
import { FIX_CHECKS } from "../../domain/audits/fixes.ts";
import { call, connectMcp } from "../mcp/helpers.ts";

interface Spec {
  title: string | null;
  description: string | null;
  h1: string;
  links: string[];
  canonical?: string;
  alternates?: Record<string, string>;
}

const WEIRD = `/sale/summer-shirt;v"{2}`;

/** The fixture: pages by path, redirects, the sitemap; all mutable so the test can fix them. */
function shop() {
  const d = (s: string) =>
    `${s}: a helpful description of this page that is long enough for search results.`;
  const pages: Record<string, Spec> = {
    "/": {
      title: "Fixture shop home page",
      description: d("Home"),
      h1: "Fixture shop",
      links: [
        "/products/blue-shirt",
        "/sale/summer-shirt",
        "/no-title",
        "/no-desc",
        "/dup-1",
        "/dup-2",
        "/old-page",
        "/products/blu-shirt",
        "/canon",
        "/en",
        "/de",
        "/about",
      ],
    },
    "/products/blue-shirt": {
      title: "Blue shirt in cotton",
      description: d("Blue shirt"),
      h1: "Blue shirt",
      links: ["/"],
    },
    "/sale/summer-shirt": {
      title: "Summer shirt on sale",
      description: d("Summer shirt"),
      h1: "Summer shirt",
      links: ["/", WEIRD],
    },
    "/no-title": { title: null, description: d("No title"), h1: "Red running shoes", links: [] },
    "/no-desc": {
      title: "A page without a description",
      description: null,
      h1: "Socks",
      links: [],
    },
    "/dup-1": {
      title: "The same title on two pages",
      description: d("Shared"),
      h1: "Winter jackets",
      links: [],
    },
    "/dup-2": {
      title: "The same title on two pages",
      description: d("Shared"),
      h1: "Rain boots",
      links: [],
    },
    "/about": { title: "About the fixture shop", description: d("About"), h1: "About", links: [] },
    "/canon": {
      title: "A page with a redirecting canonical",
      description: d("Canon"),
      h1: "Canonical test",
      links: [],
      canonical: "/old-canon",
    },
    "/en": {
      title: "English version of the page",
      description: d("English"),
      h1: "English",
      links: [],
      alternates: { en: "/en", de: "/de-old" },
    },
    "/de": {
      title: "Deutsche Version der Seite",
      description: d("Deutsch"),
      h1: "Deutsch",
      links: [],
      alternates: { en: "/en", de: "/de" },
    },
  };
  const redirects: Record<string, string> = {
    "/old-page": "/about",
    "/old-canon": "/canon-final",
    "/de-old": "/de",
  };
  pages["/canon-final"] = {
    title: "The final canonical page",
    description: d("Final"),
    h1: "Final",
    links: [],
  };
  let sitemap = ["/", "/old-page", "/about"];
  let origin = "";
  const abs = (p: string) => new URL(p, origin).href;

  const render = (path: string, s: Spec): string => {
    const head = [
      s.canonical ? `<link rel="canonical" href="${abs(s.canonical)}">` : "",
      ...Object.entries(s.alternates ?? {}).map(([l, h]) =>
        `<link rel="alternate" hreflang="${l}" href="${abs(h)}">`
      ),
    ].join("");
    // Links in single quotes: a target may carry a double quote.
    const body = s.links.map((l) => `<a href='${l.startsWith("http") ? l : l}'>Go to ${l}</a>`)
      .join(" ");
    return page({
      title: s.title,
      description: s.description,
      h1: s.h1,
      head,
      body,
      key: path,
    });
  };
  const routes = (p: string): Route | undefined => {
    const path = p.split("?")[0];
    if (path === "/robots.txt") {
      return { body: `User-agent: *\nAllow: /\nSitemap: ${abs("/sitemap.xml")}\n` };
    }
    if (path === "/sitemap.xml") {
      return {
        headers: { "content-type": "application/xml" },
        body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
          sitemap.map((u) => `<url><loc>${abs(u)}</loc></url>`).join("") + "</urlset>",
      };
    }
    // The raw request target, as nginx's $request_uri sees it.
    if (redirects[p] !== undefined) {
      return { status: 301, headers: { location: abs(redirects[p]) }, body: "" };
    }
    const s = pages[path];
    return s ? html(render(path, s)) : undefined;
  };
  const site = serveSite(routes);
  origin = site.origin;
  return {
    site,
    pages,
    redirects,
    setSitemap: (f: (s: string[]) => string[]) => void (sitemap = f(sitemap)),
    sitemap: () => sitemap,
  };
}

async function audit(app: TestApp, key: string, projectId: string) {
  const started = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
  assert.equal(started.status, 202, started.text);
  const done = await waitForAudit(app, key, started.body.audit_id);
  assert.equal(done.body.status, "completed", done.text);
  return started.body.audit_id as string;
}

async function recheck(app: TestApp, key: string, auditId: string, check: string) {
  const res = await app.req("POST", `/v1/audits/${auditId}/issues/${check}/recheck`, { key });
  assert.equal(res.status, 202, res.text);
  const done = await pollUntil(
    () => app.req("GET", res.body.poll, { key }),
    (r) => r.body?.status === "completed" || r.body?.status === "failed",
    { what: `re-check ${check}` },
  );
  assert.equal(done.body.status, "completed", done.text);
  return done.body;
}

/** nginx's quoted-string rules, strictly: the map block and nothing else. */
function parseNginxMap(text: string): Map<string, string> {
  const lines = text.split("\n").filter((l) => l.trim() !== "" && !l.trimStart().startsWith("#"));
  assert.equal(lines[0], "map $request_uri $serpwright_redirect {");
  assert.equal(lines[1].trim(), 'default "";');
  assert.equal(lines[lines.length - 1], "}");
  const out = new Map<string, string>();
  for (const line of lines.slice(2, -1)) {
    // Two double-quoted strings with no quote, backslash or $ inside, then `;`, nothing else.
    const m = /^ {4}"([^"\\$]*)" "([^"\\$]*)";$/.exec(line);
    assert.ok(m, `not a plain map line: ${JSON.stringify(line)}`);
    assert.ok(m[1].startsWith("/") && !/[\s{}]/.test(m[1]), line);
    out.set(m[1], m[2]);
  }
  return out;
}

/** Apache RedirectMatch lines, strictly: `\xHH` escapes and plain characters only. */
function parseApache(text: string): Map<RegExp, string> {
  const out = new Map<RegExp, string>();
  for (const line of text.split("\n")) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const m = /^RedirectMatch 301 "\^((?:[A-Za-z0-9/_-]|\\x[0-9a-f]{2})*)\$" "([^"\\$\s]+)"$/
      .exec(line);
    assert.ok(m, `not a plain RedirectMatch line: ${JSON.stringify(line)}`);
    out.set(new RegExp(`^${m[1]}$`), m[2]);
  }
  return out;
}

// deno-lint-ignore no-explicit-any
type Fix = any;

Deno.test("fixes: a proposal for each kind of defect, server files parsed back, applied to the fixture, then every item re-checked fixed", () =>
  withApp(async (app) => {
    const f = shop();
    const { site } = f;
    try {
      const { live } = await liveWithCredits(app, 200);
      const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: site.origin } });
      assert.equal(proj.status, 201, proj.text);
      const auditId = await audit(app, live, proj.body.project_id);

      // Every fix, paged with the cursor (small pages walk the sections).
      const fixes: Fix[] = [];
      let cursor: string | null = null;
      do {
        const q: string = `?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const res = await app.req("GET", `/v1/audits/${auditId}/fixes${q}`, { key: live });
        assert.equal(res.status, 200, res.text + q);
        assert.ok(res.headers.get("x-ratelimit-limit"), "rate limit headers");
        fixes.push(...res.body.data);
        cursor = res.body.next_cursor;
      } while (cursor);
      const whole = await app.req("GET", `/v1/audits/${auditId}/fixes?limit=100`, { key: live });
      assert.deepEqual(whole.body.data, fixes, "paged and whole lists agree");
      const kinds = new Set(fixes.map((x) => `${x.check}:${x.kind}`));
      for (
        const k of [
          "title_missing:title",
          "title_duplicate:title",
          "meta_description_missing:meta_description",
          "meta_description_duplicate:meta_description",
          "internal_redirect_links:link",
          "broken_internal_links:link",
          "broken_internal_links:redirect",
          "canonical_target_bad:canonical",
          "hreflang_target_bad:hreflang",
          "sitemap_bad_entries:sitemap_drop",
          "sitemap_missing_indexable:sitemap_add",
        ]
      ) assert.ok(kinds.has(k), `${k} in ${[...kinds].join(", ")}`);
      const by = (check: string, url: string) =>
        fixes.filter((x) => x.check === check && x.url === site.url(url));
      const [noTitle] = by("title_missing", "/no-title");
      assert.match(noTitle.proposed, /^Red running shoes \| 127\.0\.0\.1$/);
      assert.equal(noTitle.source, "page_text");
      assert.equal(by("internal_redirect_links", "/")[0].proposed, site.url("/about"));
      const redirects = fixes.filter((x) => x.kind === "redirect");
      const guess = Object.fromEntries(redirects.map((x) => [x.url, x.proposed]));
      assert.equal(guess[site.url("/products/blu-shirt")], site.url("/products/blue-shirt"));
      const weird = new URL(WEIRD, site.origin).href;
      assert.equal(weird, site.url("/sale/summer-shirt;v%22%7B2%7D"));
      assert.equal(guess[weird], site.url("/sale/summer-shirt"));
      assert.equal(by("canonical_target_bad", "/canon")[0].proposed, site.url("/canon-final"));
      assert.equal(by("hreflang_target_bad", "/en")[0].proposed, site.url("/de"));
      for (const x of fixes) {
        assert.ok(["high", "medium", "low"].includes(x.confidence));
        assert.equal(typeof x.why, "string");
      }

      // Another account sees nothing; a check without fixes and a forged cursor are 400.
      const stranger = await liveWithCredits(app, 0);
      for (const path of [`/v1/audits/${auditId}/fixes`, `/v1/audits/${auditId}/fixes/redirects`]) {
        const res = await app.req("GET", path, { key: stranger.live });
        assert.equal(res.status, 404, res.text);
        assert.equal(res.body.error.code, "not_found");
      }
      for (const q of ["check=h1_missing", "cursor=s99.AAAA", "cursor=s1.%21%21"]) {
        const res = await app.req("GET", `/v1/audits/${auditId}/fixes?${q}`, { key: live });
        assert.equal(res.status, 400, `${q}: ${res.text}`);
        assert.equal(res.body.error.code, "invalid_request");
      }
      const onlyBroken = await app.req(
        "GET",
        `/v1/audits/${auditId}/fixes?check=broken_internal_links`,
        { key: live },
      );
      assert.deepEqual(
        onlyBroken.body.data,
        fixes.filter((x) => x.check === "broken_internal_links"),
      );

      // CSV and NDJSON: the same rows.
      const csv = await app.req("GET", `/v1/audits/${auditId}/fixes?format=csv`, { key: live });
      assert.equal(csv.status, 200);
      assert.match(csv.headers.get("content-type")!, /text\/csv/);
      assert.equal(csv.text.trim().split("\r\n").length, fixes.length + 1);
      assert.ok(csv.text.startsWith("url,check,kind,target,current,proposed,why,confidence"));
      const nd = await app.req("GET", `/v1/audits/${auditId}/fixes?format=ndjson`, { key: live });
      assert.deepEqual(nd.text.trim().split("\n").map((l) => JSON.parse(l)), fixes);

      // The redirect map as server files, parsed back strictly.
      const nginx = await app.req("GET", `/v1/audits/${auditId}/fixes/redirects?format=nginx`, {
        key: live,
      });
      assert.equal(nginx.status, 200, nginx.text);
      const map = parseNginxMap(nginx.text);
      assert.equal(map.get("/products/blu-shirt"), "/products/blue-shirt");
      assert.equal(map.get(`/sale/summer-shirt;v%22%7B2%7D`), "/sale/summer-shirt");
      const apache = parseApache(
        (await app.req("GET", `/v1/audits/${auditId}/fixes/redirects?format=apache`, {
          key: live,
        })).text,
      );
      const apacheTo = (decodedPath: string) => {
        const hits = [...apache].filter(([re]) => re.test(decodedPath));
        assert.equal(hits.length, 1, decodedPath);
        return hits[0][1];
      };
      // Apache matches the decoded path: the pattern matches it exactly, and nothing close.
      assert.equal(apacheTo(WEIRD), "/sale/summer-shirt");
      assert.equal(apacheTo("/products/blu-shirt"), "/products/blue-shirt");
      assert.equal([...apache].filter(([re]) => re.test(`/sale/summer-shirt;v"{2}x`)).length, 0);
      const json = await app.req("GET", `/v1/audits/${auditId}/fixes/redirects`, { key: live });
      const w = json.body.data.find((r: Fix) => r.from === weird);
      assert.deepEqual([w.nginx, w.apache], [{ written: true, reason: null }, {
        written: true,
        reason: null,
      }]);
      // MCP: the same bodies.
      const client = await connectMcp(app, { key: live });
      try {
        const mcpFixes = await call(client, "audits", {
          action: "fixes",
          audit_id: auditId,
          limit: 100,
        });
        assert.deepEqual(mcpFixes, whole.body);
        const mcpMap = await call(client, "audits", { action: "redirects", audit_id: auditId });
        assert.deepEqual(mcpMap, json.body);
      } finally {
        await client.close();
      }
      const csvMap = await app.req("GET", `/v1/audits/${auditId}/fixes/redirects?format=csv`, {
        key: live,
      });
      assert.match(csvMap.text, /^from,to,score,confidence,links,nginx,apache\r\n/);

      // Apply every fix to the fixture, as an agent would.
      for (const x of fixes) {
        const path = new URL(x.url).pathname;
        const spec = f.pages[path];
        const rel = (u: string) => new URL(u).pathname;
        switch (x.kind) {
          case "title":
            spec.title = x.proposed;
            break;
          case "meta_description":
            spec.description = x.proposed;
            break;
          case "link":
            for (const s of Object.values(f.pages)) {
              s.links = s.links.map((l) =>
                new URL(l, site.origin).href === x.target ? rel(x.proposed) : l
              );
            }
            break;
          case "canonical":
            spec.canonical = rel(x.proposed);
            break;
          case "hreflang":
            for (const [l, h] of Object.entries(spec.alternates!)) {
              if (new URL(h, site.origin).href === x.target) spec.alternates![l] = rel(x.proposed);
            }
            break;
          case "sitemap_drop":
            f.setSitemap((s) => s.filter((u) => site.url(u) !== x.target));
            if (x.proposed) f.setSitemap((s) => [...s, rel(x.proposed)]);
            break;
          case "sitemap_add":
            f.setSitemap((s) => [...s, rel(x.proposed)]);
            break;
        }
      }
      // The redirect map goes into the server, from the parsed nginx file.
      for (const [from, to] of map) f.redirects[from] = to;

      // Re-checks: every item of the re-checkable checks fixed.
      for (
        const check of [
          "title_missing",
          "meta_description_missing",
          "internal_redirect_links",
          "broken_internal_links",
        ]
      ) {
        const r = await recheck(app, live, auditId, check);
        assert.equal(r.counts.still_failing + r.counts.not_checked, 0, JSON.stringify(r));
        assert.equal(r.item_counts.still_failing + r.item_counts.not_checked, 0, check);
      }
      // The site-wide checks are re-checked by a new audit: none of the fix checks fires.
      const again = await audit(app, live, proj.body.project_id);
      const issues = await app.req("GET", `/v1/audits/${again}/issues?limit=100`, { key: live });
      const fired = issues.body.data.filter((i: Fix) => i.affected_count > 0).map((i: Fix) =>
        i.check
      );
      for (const c of FIX_CHECKS) assert.ok(!fired.includes(c), `${c} still fires: ${fired}`);
      const left = await app.req("GET", `/v1/audits/${again}/fixes`, { key: live });
      assert.deepEqual(left.body.data, []);
    } finally {
      await site.close();
    }
  }, { env: { CRAWL_STEP_PAGES: "5" } }));

Deno.test("fixes: unknown audits 404, no key 401", () =>
  withApp(async (app) => {
    const { live } = await liveWithCredits(app, 0);
    for (const path of ["/v1/audits/aud_nope/fixes", "/v1/audits/aud_nope/fixes/redirects"]) {
      const res = await app.req("GET", path, { key: live });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.error.code, "not_found");
    }
    const noKey = await app.req("GET", "/v1/audits/aud_nope/fixes");
    assert.equal(noKey.status, 401);
  }));
