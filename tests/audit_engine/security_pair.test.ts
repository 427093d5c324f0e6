/**
 * Issue 12 §2: two plain-http sites that differ only in what a security reviewer looks at. One
 * sends the hardening headers, no version banners, flagged cookies, and loads nothing over http
 * from other hosts; the other sends no hardening header, names its server and framework
 * versions, sets a bare cookie, loads a script, an image and an iframe over http from other
 * hosts, posts a form to http and loads a years-old jQuery (recognised from its file banner).
 */
import assert from "node:assert/strict";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import type { Evidence } from "../../domain/audit_engine/types.ts";
import { PAGE_CHECKS } from "../../domain/audit_engine/checks/index.ts";
import { extractPageFacts } from "../../domain/audit_engine/facts/extract.ts";
import { scriptLibrary } from "../../domain/audit_engine/js_libraries.ts";
import { page, type Route, serveSite } from "../helpers/sites.ts";

const GOOD: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'self'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "strict-origin-when-cross-origin",
  "set-cookie": "sid=abc; Path=/; HttpOnly; SameSite=Lax",
};
const BAD: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  server: "Apache/2.4.29 (Ubuntu)",
  "x-powered-by": "PHP/7.2.24",
  "set-cookie": "sid=abc; Path=/",
};
const JQUERY_1_12 =
  "/*! jQuery v1.12.4 | (c) jQuery Foundation | jquery.org/license */\n!function(a,b){}";

function routes(bad: boolean): Record<string, Route> {
  const headers = bad ? BAD : GOOD;
  const extra = bad
    ? `<script src="http://cdn.other.test/widget.js" defer></script>
       <img src="http://img.other.test/banner.png" alt="" width="1" height="1">
       <iframe src="http://video.other.test/embed"></iframe>
       <form action="http://forms.other.test/subscribe" method="post"><input name="e"></form>
       <script src="/js/jquery.min.js" defer></script>`
    : `<script src="/js/app.js" defer></script>
       <img src="/img/banner.png" alt="" width="1" height="1">
       <form action="https://forms.other.test/subscribe" method="post"><input name="e"></form>`;
  const build = (key: string, links: string[]) => ({
    status: 200,
    body: page({ key, title: `Pair fixture page ${key} for audits`, links, body: extra }),
    headers,
  });
  return {
    "/": build("home", ["/about"]),
    "/about": build("about", ["/"]),
    "/js/jquery.min.js": {
      body: JQUERY_1_12,
      headers: { "content-type": "application/javascript" },
    },
    // The good site's own files answer (a missing one would be a broken resource, not security).
    "/js/app.js": { body: "window.app = 1;", headers: { "content-type": "text/javascript" } },
    "/img/banner.png": { body: "png", headers: { "content-type": "image/png" } },
  };
}

async function auditPair(bad: boolean) {
  const r = routes(bad);
  const site = serveSite((p) => r[p]);
  try {
    return await runAuditDetailed({
      startUrl: site.url("/"),
      maxPages: 20,
      concurrency: 4,
      allowPrivate: true,
      timeoutMs: 3_000,
    });
  } finally {
    await site.close();
  }
}

Deno.test("a pair of http sites differing only in security points: >= 15 points apart", async () => {
  const good = await auditPair(false);
  const bad = await auditPair(true);
  const firedIn = (t: typeof good.tallies) =>
    [...t].filter(([, v]) => v.affected > 0).map(([k]) => k);
  const goodFired = firedIn(good.tallies);
  const badFired = firedIn(bad.tallies);
  for (
    const id of [
      "version_disclosure",
      "vulnerable_js_library",
      "http_subresources",
      "insecure_form",
      "cookie_flags",
      "clickjacking_unprotected",
      "mime_sniffing_unprotected",
      "csp_missing",
    ]
  ) {
    assert.ok(badFired.includes(id), `${id} should fire on the worse site: ${badFired}`);
    assert.ok(!goodFired.includes(id), `${id} must not fire on the better site: ${goodFired}`);
  }
  // Both are plain http: the first critical finding is the same, and no longer the floor.
  assert.ok(goodFired.includes("not_https") && badFired.includes("not_https"));
  const g = good.report.summary.categories.security;
  const b = bad.report.summary.categories.security;
  assert.ok(g - b >= 15, `security ${g} vs ${b}`);
  assert.ok(
    bad.report.score < good.report.score,
    `overall ${good.report.score} vs ${bad.report.score}`,
  );
  for (const c of ["performance", "indexability", "mobile", "structure"] as const) {
    assert.equal(
      good.report.summary.categories[c],
      bad.report.summary.categories[c],
      `${c} must not differ: the sites differ only in security`,
    );
  }
});

Deno.test("security checks return evidence: resource, element, header, library and advisory", () => {
  const url = new URL("http://site.test/");
  const html = page({
    key: "e",
    head: '<meta name="generator" content="WordPress 5.2.1">' +
      '<script src="https://cdn.test/ajax/libs/jquery/3.4.1/jquery.min.js"></script>',
    body: '<iframe src="http://video.other.test/embed"></iframe>' +
      '<form action="http://forms.other.test/post"></form>',
  });
  const headers = new Headers({ ...BAD, "content-type": "text/html" });
  const ctx = {
    url,
    status: 200,
    headers,
    facts: extractPageFacts(html, url, "site.test"),
    depth: 0,
    isHome: true,
    indexable: true,
    now: 0,
    // What the file's head showed the crawl (its banner confirms the version the URL names).
    scriptLibraries: new Map([[
      "https://cdn.test/ajax/libs/jquery/3.4.1/jquery.min.js",
      scriptLibrary(
        "https://cdn.test/ajax/libs/jquery/3.4.1/jquery.min.js",
        "/*! jQuery v3.4.1 | (c) JS Foundation and other contributors | jquery.org/license */",
      )!,
    ]]),
  };
  const ev = (id: string) => {
    const c = PAGE_CHECKS.find((c) => c.id === id)!;
    const v = c.evaluate(ctx);
    assert.ok(v && typeof v === "object", `${id} should return evidence, got ${v}`);
    return (Array.isArray(v) ? v : [v]) as Evidence[];
  };
  assert.deepEqual(ev("http_subresources"), [
    { resource: "http://video.other.test/embed", element: "iframe" },
  ]);
  assert.deepEqual(ev("insecure_form"), [{ action: "http://forms.other.test/post" }]);
  assert.deepEqual(ev("version_disclosure"), [
    { source: "header", name: "server", value: "Apache/2.4.29 (Ubuntu)" },
    { source: "header", name: "x-powered-by", value: "PHP/7.2.24" },
    { source: "meta", name: "generator", value: "WordPress 5.2.1" },
  ]);
  const lib = ev("vulnerable_js_library")[0];
  assert.equal(lib.library, "jquery");
  assert.equal(lib.version, "3.4.1");
  assert.deepEqual(lib.advisories, ["CVE-2020-11022", "CVE-2020-11023"]);
  assert.deepEqual(ev("cookie_flags"), [{ cookie: "sid", missing: ["HttpOnly", "SameSite"] }]);
  assert.deepEqual(ev("not_https"), [{ url: "http://site.test/" }]);
  // Nothing found: false, never an empty (truthy) array.
  const clean = PAGE_CHECKS.find((c) => c.id === "mixed_content_active")!;
  assert.equal(clean.evaluate({ ...ctx, url: new URL("https://site.test/") }), false);
});
