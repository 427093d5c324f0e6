import assert from "node:assert/strict";
import { extractPageFacts } from "../../domain/audit_engine/facts/extract.ts";
import {
  advisoriesFor,
  ADVISORY_TABLE,
  libraryFromBanner,
  libraryFromUrl,
  needsBanner,
  scriptLibrary,
} from "../../domain/audit_engine/js_libraries.ts";

Deno.test("library versions are read from file names, CDN paths and ?ver=", () => {
  const cases: [string, string | null, string | null][] = [
    ["https://code.jquery.com/jquery-1.8.3.min.js", "jquery", "1.8.3"],
    ["https://ajax.googleapis.com/ajax/libs/jquery/3.4.1/jquery.min.js", "jquery", "3.4.1"],
    ["https://cdn.jsdelivr.net/npm/jquery@3.5.1/dist/jquery.min.js", "jquery", "3.5.1"],
    ["https://site.test/wp-includes/js/jquery/jquery.min.js?ver=1.12.4", "jquery", "1.12.4"],
    [
      "https://cdnjs.cloudflare.com/ajax/libs/jqueryui/1.12.1/jquery-ui.min.js",
      "jquery-ui",
      "1.12.1",
    ],
    ["https://site.test/js/jquery-ui-1.12.1.min.js", "jquery-ui", "1.12.1"],
    ["https://ajax.googleapis.com/ajax/libs/angularjs/1.5.8/angular.min.js", "angularjs", "1.5.8"],
    ["https://cdn.test/twitter-bootstrap/3.3.7/js/bootstrap.min.js", "bootstrap", "3.3.7"],
    [
      "https://cdn.jsdelivr.net/npm/bootstrap@4.3.0/dist/js/bootstrap.bundle.min.js",
      "bootstrap",
      "4.3.0",
    ],
    ["https://cdnjs.cloudflare.com/ajax/libs/lodash.js/4.17.15/lodash.min.js", "lodash", "4.17.15"],
    ["https://cdnjs.cloudflare.com/ajax/libs/moment.js/2.29.1/moment.min.js", "moment", "2.29.1"],
    ["https://site.test/js/jquery.min.js", null, null],
    ["https://cdn.test/npm/@angular/core@15.0.0/bundles/core.umd.js", null, null],
    ["https://site.test/js/app.js", null, null],
  ];
  for (const [url, lib, version] of cases) {
    const d = libraryFromUrl(url);
    assert.deepEqual(d && [d.library, d.version], lib && [lib, version], url);
  }
  assert.ok(needsBanner("https://site.test/js/jquery.min.js"));
  assert.ok(!needsBanner("https://code.jquery.com/jquery-1.8.3.min.js"));
  assert.ok(!needsBanner("https://site.test/js/app.js"));
});

Deno.test("library banners name the version", () => {
  const cases: [string, string, string][] = [
    ["/*! jQuery v3.4.1 | (c) JS Foundation and other contributors", "jquery", "3.4.1"],
    ["/*!\n * jQuery JavaScript Library v1.8.3\n * http://jquery.com/", "jquery", "1.8.3"],
    ["/*! jQuery UI - v1.12.1 - 2016-09-14", "jquery-ui", "1.12.1"],
    ["/**\n * @license AngularJS v1.8.2\n * (c) 2010-2020 Google LLC", "angularjs", "1.8.2"],
    ["/*!\n * Bootstrap v3.3.7 (http://getbootstrap.com)", "bootstrap", "3.3.7"],
    ["/**\n * @license\n * lodash 3.10.1 (Custom Build)", "lodash", "3.10.1"],
    [
      "/**\n * @license\n * Lodash <https://lodash.com/>\n */\n;(function() {\n  var undefined;\n  var VERSION = '4.17.20';",
      "lodash",
      "4.17.20",
    ],
    ["//! moment.js\n//! version : 2.29.1\n//! authors", "moment", "2.29.1"],
  ];
  for (const [head, lib, version] of cases) {
    const d = libraryFromBanner(head);
    assert.deepEqual(d && [d.library, d.version], [lib, version], head);
  }
  assert.equal(libraryFromBanner("/*! jQuery Migrate v3.0.0 */"), null);
});

Deno.test("the advisory table: boundaries as published, and it names its source and date", () => {
  const ids = (lib: Parameters<typeof advisoriesFor>[0], v: string) =>
    advisoriesFor(lib, v).flatMap((a) => a.ids);
  assert.ok(ids("jquery", "3.4.1").includes("CVE-2020-11022"));
  assert.deepEqual(ids("jquery", "3.5.0"), []);
  assert.ok(ids("jquery", "1.8.3").includes("CVE-2012-6708"));
  assert.ok(!ids("jquery", "1.9.0").includes("CVE-2012-6708"));
  assert.ok(ids("angularjs", "1.8.3").includes("EOL"));
  assert.ok(ids("bootstrap", "3.4.0").includes("CVE-2019-8331"));
  assert.deepEqual(ids("bootstrap", "3.4.1"), []);
  assert.ok(ids("bootstrap", "4.3.0").includes("CVE-2019-8331"));
  assert.deepEqual(ids("bootstrap", "4.3.1"), []);
  assert.deepEqual(ids("lodash", "4.17.21"), []);
  assert.ok(ids("lodash", "4.17.20").includes("CVE-2021-23337"));
  assert.deepEqual(ids("moment", "2.29.4"), []);
  assert.ok(ids("moment", "2.29.3").includes("CVE-2022-31129"));
  assert.match(ADVISORY_TABLE.compiled, /^\d{4}-\d{2}-\d{2}$/);
  assert.match(ADVISORY_TABLE.source, /GitHub Advisory Database/);
});

Deno.test("libraries bundled into inline scripts are known by their banner, numbered in page order", () => {
  const banner = (v: string) => `/*! jQuery v${v} | (c) OpenJS Foundation */`;
  const f = extractPageFacts(
    `<html><head><script>var analytics = 1;</script>` +
      `<script type="application/ld+json">{"@context":"https://schema.org","@type":"WebPage"}</script>` +
      `<script>${banner("1.8.3")}\n!function(){}();</script>` +
      `<script type="text/template">${banner("1.4.0")}</script>` +
      `<script type="module">/*! Bootstrap v3.3.7 (https://getbootstrap.com/) */</script>` +
      `<script>${"x".repeat(600)}${banner("1.6.0")}</script>` +
      `</head><body><p>x</p></body></html>`,
    new URL("https://s.test/"),
    "s.test",
  );
  // Inline classic and module scripts count (1, 2, 3, 4); the JSON-LD block and the template do
  // not; a banner past the first 512 characters is not a banner.
  assert.deepEqual(f.inlineLibraries, [
    { library: "jquery", version: "1.8.3", from: "banner", index: 2 },
    { library: "bootstrap", version: "3.3.7", from: "banner", index: 3 },
  ]);
});

Deno.test("libraries from content whatever the file's name: banner, the code's version string, content over name", () => {
  const banner = "/*! jQuery v1.8.3 jquery.com | jquery.org/license */\n!function(){}";
  assert.deepEqual(scriptLibrary("https://s.test/js/lib.js", banner), {
    library: "jquery",
    version: "1.8.3",
    from: "banner",
  });
  // A bundle with the banner stripped: jQuery's prototype names its version.
  const bundle = `!function(){var a="${
    "x".repeat(20_000)
  }";T.fn=T.prototype={jquery:"1.8.3",length:0}}`;
  assert.deepEqual(scriptLibrary("https://s.test/static/app.4f2a.js", bundle), {
    library: "jquery",
    version: "1.8.3",
    from: "version_string",
  });
  // Named 1.8.3, holding 3.7.1 (with or without its banner): the content wins.
  assert.equal(
    scriptLibrary("https://s.test/js/jquery-1.8.3.min.js", "/*! jQuery v3.7.1 | (c) OpenJS */")
      ?.version,
    "3.7.1",
  );
  assert.equal(
    scriptLibrary("https://s.test/js/jquery-1.8.3.min.js", 'x={jquery:"3.7.1"}')?.version,
    "3.7.1",
  );
  // A script that is no library shows none.
  assert.equal(scriptLibrary("https://s.test/js/site.js", "document.title = 'jquery';"), null);
});
