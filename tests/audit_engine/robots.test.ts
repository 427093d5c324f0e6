/**
 * robots.txt parsing and matching: RFC 9309 and Google's documented examples, every cap hit and
 * reported, and the wildcard bomb that used to hold the event loop for seconds per URL.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  DEFAULT_ROBOTS_CAPS,
  makeRobots,
  productToken,
  type Robots,
  type RobotsCaps,
} from "../../domain/audit_engine/robots.ts";
import {
  compilePattern,
  matchesPattern,
  NATIVE_SEARCH_MAX,
  OctetPath,
  toOctets,
} from "../../domain/audit_engine/robots_pattern.ts";

const ORIGIN = "https://example.com";
const robots = (body: string, caps?: Partial<RobotsCaps>): Robots =>
  makeRobots(`${ORIGIN}/robots.txt`, "ok", 200, body, caps);
const allowed = (r: Robots, path: string, agent?: string) => r.isAllowed(ORIGIN + path, agent);
const NOTHING_CAPPED = {
  bytesTruncated: false,
  rulesDropped: 0,
  longPatternsDropped: 0,
  wildcardPatternsDropped: 0,
  wildcardRulesDropped: 0,
};

/** Whether `Disallow: pattern` alone blocks `path` (Google's "path matching" table). */
function blocks(pattern: string, path: string): boolean {
  return !allowed(robots(`User-agent: *\nDisallow: ${pattern}\n`), path);
}

Deno.test("Google's path examples: prefix, `*`, `$`, case-sensitive paths", () => {
  const table: [string, string[], string[]][] = [
    ["/", ["/", "/anything/at/all?x=1"], []],
    ["/*", ["/", "/anything"], []],
    ["/$", ["/"], ["/page", "/?x=1"]],
    [
      "/fish",
      ["/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fish.php?id=anything"],
      ["/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"],
    ],
    ["/fish*", ["/fish", "/fish.html", "/fishheads/yummy.html"], ["/Fish.asp", "/catfish"]],
    [
      "/fish/",
      ["/fish/", "/fish/?id=anything", "/fish/salmon.htm"],
      ["/fish", "/fish.html", "/animals/fish/", "/Fish/Salmon.asp"],
    ],
    [
      "/*.php",
      ["/index.php", "/folder/filename.php?parameters", "/folder/any.php.file.html", "/a.php/"],
      ["/", "/windows.PHP"],
    ],
    [
      "/*.php$",
      ["/filename.php", "/folder/filename.php"],
      ["/filename.php?parameters", "/filename.php/", "/filename.php5", "/windows.PHP"],
    ],
    ["/fish*.php", ["/fish.php", "/fishheads/catfish.php?parameters"], ["/Fish.PHP"]],
    ["/a*b*c$", ["/abc", "/aXbYc", "/abcbc", "/a/b/c"], ["/abcd", "/acb", "/ab"]],
    ["/ab*ba$", ["/abba", "/abxba"], ["/aba"]], // head and anchored tail may not overlap
    ["*.gif$", ["/x/y.gif"], ["/x/y.gif?z"]],
    ["/a$b", ["/a$b", "/a%24bc"], ["/a", "/ab"]], // `$` before the end is literal
  ];
  for (const [pattern, yes, no] of table) {
    for (const p of yes) assert.ok(blocks(pattern, p), `${pattern} should match ${p}`);
    for (const p of no) assert.ok(!blocks(pattern, p), `${pattern} should not match ${p}`);
  }
});

Deno.test("precedence: the longest match wins, Allow wins a tie (RFC 9309 2.2.2, Google)", () => {
  const r = (allow: string, disallow: string) =>
    robots(`User-agent: *\nAllow: ${allow}\nDisallow: ${disallow}\n`);
  assert.equal(allowed(r("/p", "/"), "/page"), true);
  assert.equal(allowed(r("/folder", "/folder"), "/folder/page"), true);
  assert.equal(allowed(r("/page", "/*.htm"), "/page.htm"), false);
  assert.equal(allowed(r("/$", "/"), "/"), true);
  assert.equal(allowed(r("/$", "/"), "/page.htm"), false);
  // Order in the file does not matter.
  const rfc = robots(
    "User-agent: *\nDisallow: /example/page/disallowed.gif\nAllow: /example/page/\nDisallow: /\n",
  );
  assert.equal(allowed(rfc, "/example/page/"), true);
  assert.equal(allowed(rfc, "/example/page/ok.gif"), true);
  assert.equal(allowed(rfc, "/example/page/disallowed.gif"), false);
  assert.equal(allowed(rfc, "/other"), false);
  // Specificity counts octets: an escape is one octet, so `/%41b` ties `/A*` (3) and loses to `/A*b`.
  const octets = robots("User-agent: *\nAllow: /%41b\nDisallow: /A*\n");
  assert.equal(allowed(octets, "/Ab"), true, "tie at 3 octets: Allow");
  const longer = robots("User-agent: *\nAllow: /%41b\nDisallow: /A*b\n");
  assert.equal(allowed(longer, "/Ab"), false, "/A*b is 4 octets");
});

Deno.test("percent-encoding: the RFC 9309 2.2.2 table, compared as octets both ways", () => {
  const rows: [string, string][] = [
    ["/foo/bar?baz=quz", "/foo/bar?baz=quz"],
    ["/foo/bar?baz=https://foo.bar", "/foo/bar?baz=https%3A%2F%2Ffoo.bar"],
    ["/foo/bar/ツ", "/foo/bar/%E3%83%84"],
    ["/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"],
    ["/foo/bar/%62%61%7A", "/foo/bar/baz"],
    ["/foo/bar/%e3%83%84", "/foo/bar/ツ"], // hex case does not matter
    ["/foo/bar/baz", "/foo/bar/%62%61%7a"],
  ];
  for (const [pattern, path] of rows) {
    assert.ok(blocks(pattern + "$", path), `${pattern} should match ${path}`);
  }
  // Octets, not escape triples: a literal "2F" is not inside "%2F".
  assert.ok(!blocks("/*2F", "/a%2Fb"));
  assert.ok(blocks("/*2F", "/a2Fb"));
  // A `*` written %2A is a literal asterisk, not a wildcard.
  assert.ok(blocks("/a%2Ab$", "/a*b"));
  assert.ok(!blocks("/a%2Ab$", "/axb"));
  assert.equal(toOctets("/caf%C3%A9"), toOctets("/café"));
  assert.equal(toOctets("/plain"), "/plain");
});

Deno.test("groups: product token, case-insensitive, merged groups, `*` only as fallback", () => {
  // RFC 9309 2.2.1's example.
  const r = robots(
    "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\n" +
      "user-agent: ExampleBot\ndisallow: /baz\n\n" +
      "user-agent: *\ndisallow: /foo\ndisallow: /bar\n\n" +
      "user-agent: BazBot\ndisallow: /baz\n",
  );
  for (const agent of ["ExampleBot", "examplebot", "EXAMPLEBOT/2.1"]) {
    for (const p of ["/foo", "/bar", "/baz"]) assert.equal(allowed(r, p, agent), false, agent + p);
  }
  assert.equal(allowed(r, "/foo", "BazBot"), true, "BazBot's own group replaces *");
  assert.equal(allowed(r, "/baz", "BazBot"), false);
  assert.equal(allowed(r, "/foo", "OtherBot"), false);
  assert.equal(allowed(r, "/baz", "OtherBot"), true);
  assert.equal(allowed(r, "/foo"), false, "our token falls back to *");

  // Consecutive User-agent lines share one group; a Sitemap line between them does not split it.
  const shared = robots(
    "User-agent: a\nSitemap: https://example.com/s.xml\nUser-agent: SerpwrightBot\n" +
      "Disallow: /x\n",
  );
  assert.equal(allowed(shared, "/x", "A"), false);
  assert.equal(allowed(shared, "/x"), false);
  assert.deepEqual(shared.sitemaps, ["https://example.com/s.xml"]);

  // Our own group allows everything even though `*` blocks it; an empty Disallow is no rule.
  const own = robots("User-agent: *\nDisallow: /\n\nUser-agent: SerpwrightBot\nDisallow:\n");
  assert.equal(allowed(own, "/anything"), true);
  assert.equal(allowed(own, "/anything", "Googlebot"), false);
  assert.equal(allowed(robots("User-agent: *\nDisallow:\n"), "/"), true);

  // Rules before any User-agent line belong to nobody.
  assert.equal(allowed(robots("Disallow: /\nUser-agent: *\nAllow: /x\n"), "/y"), true);
  assert.equal(productToken("Googlebot/2.1 (+http://www.google.com/bot.html)"), "googlebot");
  assert.equal(productToken(" * "), "*");
});

Deno.test("other origins, allow-all stand-ins, Crawl-delay, Sitemap and lint problems", () => {
  const r = robots(
    "User-agent: *\nDisallow: /\nCrawl-delay: 3\n\nUser-agent: OtherBot\nCrawl-delay: 9\n" +
      "Sitemap: https://example.com/a.xml\nsitemap:https://example.com/b.xml # comment\n" +
      "Foo: bar\nDisallow: nope\n",
  );
  assert.equal(allowed(r, "/x"), false);
  assert.equal(r.isAllowed("https://other.example/x"), true, "another host");
  assert.equal(r.isAllowed("http://example.com/x"), true, "another scheme");
  assert.equal(r.isAllowed("https://example.com:8443/x"), true, "another port");
  assert.equal(r.isAllowed("https://EXAMPLE.com:443/x"), false, "same origin, spelt differently");
  assert.equal(r.isAllowed("not a url"), true);
  assert.equal(r.crawlDelay, 3);
  assert.deepEqual(r.sitemaps, ["https://example.com/a.xml", "https://example.com/b.xml"]);
  assert.deepEqual(r.problems, [
    'line 9: unknown directive "foo"',
    'line 10: pattern must start with "/" or "*"',
  ]);
  assert.deepEqual(r.capped, NOTHING_CAPPED);
  assert.equal(robots("User-agent: SerpwrightBot\nCrawl-delay: 2\n").crawlDelay, 2);
  assert.equal(robots("User-agent: *\nCrawl-delay: soon\n").crawlDelay, 0);

  for (const state of ["missing", "unreachable"] as const) {
    const stand = makeRobots(`${ORIGIN}/robots.txt`, state, 404, "User-agent: *\nDisallow: /\n");
    assert.equal(allowed(stand, "/x"), true);
    assert.deepEqual(stand.problems, []);
    assert.deepEqual(stand.sitemaps, []);
  }
});

Deno.test("caps: defaults, and each cap hit, applied and reported", () => {
  assert.deepEqual({ ...DEFAULT_ROBOTS_CAPS }, {
    maxBytes: 512_000,
    maxRules: 5_000,
    maxPatternLength: 1_000,
    maxWildcards: 20,
    maxWildcardRules: 500,
    maxPathLength: 2_048,
  });

  // maxBytes: the cut falls inside "Disallow: /private"; that line is left out whole.
  const head = "User-agent: *\nDisallow: /a\n";
  const cut = robots(head + "Disallow: /private\n", { maxBytes: head.length + 12 });
  assert.deepEqual(cut.capped, { ...NOTHING_CAPPED, bytesTruncated: true });
  assert.equal(allowed(cut, "/a"), false);
  assert.equal(allowed(cut, "/public"), true, "no `Disallow: /p` from half a line");
  assert.equal(allowed(cut, "/private"), true);
  assert.ok(cut.problems.includes("file larger than 39 bytes"));
  const exact = robots(head + "Disallow: /b\n", { maxBytes: (head + "Disallow: /b").length });
  assert.equal(allowed(exact, "/b"), false, "a cut right before a line break keeps the line");
  assert.equal(exact.capped.bytesTruncated, true);
  const multiByte = robots("User-agent: *\nDisallow: /é\nDisallow: /x\n", { maxBytes: 29 });
  assert.equal(allowed(multiByte, "/é"), false, "bytes, not characters");
  assert.equal(allowed(multiByte, "/x"), true);

  // maxRules counts rules across groups, in file order.
  const many = robots("User-agent: a\nDisallow: /1\nUser-agent: b\nDisallow: /2\nDisallow: /3\n", {
    maxRules: 2,
  });
  assert.deepEqual(many.capped, { ...NOTHING_CAPPED, rulesDropped: 1 });
  assert.equal(allowed(many, "/2", "b"), false);
  assert.equal(allowed(many, "/3", "b"), true);

  // maxPatternLength, measured as written.
  const long = robots(`User-agent: *\nDisallow: /${"x".repeat(20)}\nDisallow: /short\n`, {
    maxPatternLength: 20,
  });
  assert.deepEqual(long.capped, { ...NOTHING_CAPPED, longPatternsDropped: 1 });
  assert.equal(allowed(long, "/" + "x".repeat(20)), true);
  assert.equal(allowed(long, "/short"), false);

  // maxWildcards, after `**` runs collapse into one.
  const wild = robots("User-agent: *\nDisallow: /a***b\nDisallow: /*c*d\n", { maxWildcards: 1 });
  assert.deepEqual(wild.capped, { ...NOTHING_CAPPED, wildcardPatternsDropped: 1 });
  assert.equal(allowed(wild, "/aXXb"), false);
  assert.equal(allowed(wild, "/c-d"), true);

  // maxWildcardRules: rules with a wildcard past it are dropped, plain rules still kept.
  const wildRules = robots("User-agent: *\nDisallow: /*a\nDisallow: /*b\nDisallow: /c\n", {
    maxWildcardRules: 1,
  });
  assert.deepEqual(wildRules.capped, { ...NOTHING_CAPPED, wildcardRulesDropped: 1 });
  assert.equal(allowed(wildRules, "/xa"), false);
  assert.equal(allowed(wildRules, "/xb"), true);
  assert.equal(allowed(wildRules, "/c"), false);

  // maxPathLength: the path + query is cut, so a match past the cut is not seen.
  const short = robots("User-agent: *\nDisallow: /*x\n", { maxPathLength: 10 });
  assert.equal(allowed(short, "/aaaaaaaax"), false, "10 octets: x is inside");
  assert.equal(allowed(short, "/aaaaaaaaax"), true, "11 octets: x is cut off");
  assert.deepEqual(short.capped, NOTHING_CAPPED, "a per-URL cut, not a file report");

  // A cap that is not a number ≥ 0 takes its default.
  const odd = robots("User-agent: *\nDisallow: /x\n", { maxRules: -1, maxPathLength: NaN });
  assert.equal(allowed(odd, "/x"), false);
});

Deno.test("memoised answers stay right for every agent and path", () => {
  const r = robots("User-agent: *\nDisallow: /a\n\nUser-agent: Googlebot\nDisallow: /b\n");
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 12_000; i += 997) {
      assert.equal(allowed(r, `/a/${i}`), false);
      assert.equal(allowed(r, `/b/${i}`), true);
      assert.equal(allowed(r, `/a/${i}`, "Googlebot"), true);
      assert.equal(allowed(r, `/b/${i}`, "googlebot"), false);
    }
  }
  for (let i = 0; i < 12_000; i++) allowed(r, `/c/${i}`); // past the memo's size: evicts
  assert.equal(allowed(r, "/a/0"), false);
  assert.equal(allowed(r, "/b/0", "Googlebot"), false);
});

/** The reference: a RegExp for each pattern, fine for the short inputs generated below. */
function reference(pattern: string, path: string): boolean {
  const anchored = pattern.endsWith("$");
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const esc = body.split("*").map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"));
  return new RegExp("^" + esc.join("[^]*") + (anchored ? "$" : "")).test(path);
}

Deno.test("the greedy matcher agrees with a RegExp, short and KMP-length segments alike", () => {
  const text = (max: number) =>
    fc.string({ unit: fc.constantFrom("a", "b"), maxLength: max, size: "max" });
  const flip = (s: string, at: number) =>
    s === "" ? s : s.slice(0, at % s.length) + (s[at % s.length] === "a" ? "b" : "a") +
      s.slice(at % s.length + 1);
  fc.assert(
    fc.property(
      fc.array(text(NATIVE_SEARCH_MAX + 80), { minLength: 1, maxLength: 3 }),
      fc.boolean(),
      fc.constantFrom("random", "planted", "near miss"),
      fc.array(text(60), { minLength: 4, maxLength: 4 }),
      fc.nat(),
      (segments, anchored, mode, [rest, pre, mid, post], at) => {
        const planted = pre + segments.join(mid) + post;
        const path = "/" +
          (mode === "random" ? rest : mode === "planted" ? planted : flip(planted, at));
        const pattern = "/" + segments.join("*") + (anchored ? "$" : "");
        const got = matchesPattern(compilePattern(pattern), new OctetPath(path));
        assert.equal(got, reference(pattern, path), `${pattern} on ${path}`);
      },
    ),
    { numRuns: 600 },
  );
  // Segments that overlap themselves (KMP's borders), planted in the path.
  const seg = "ab".repeat(70) + "aab";
  const p = compilePattern(`/*${seg}*$`);
  assert.ok(matchesPattern(p, new OctetPath("/" + "ab".repeat(200) + seg + "b")));
  assert.ok(!matchesPattern(p, new OctetPath("/" + "ab".repeat(400))));
});

Deno.test("V8's quadratic needle: a long segment ending in a long run costs one pass", () => {
  // indexOf takes ~0.5 ms for this needle on 2,000 `a`s; 1,500 such rules would be ~1 s a URL.
  const seg = "a".repeat(10) + "c" + "a".repeat(300);
  let body = "User-agent: *\n";
  for (let i = 0; i < 1_500; i++) body += `Disallow: /*${seg}${i % 10}\n`;
  const r = robots(body);
  for (let i = 0; i < 50; i++) assert.equal(allowed(r, "/" + "a".repeat(2_000) + i), true);
  assert.equal(allowed(r, `/x${seg}7/y`), false);
});

Deno.test("the wildcard bomb: 500 KiB of `/*a*a*…*b`, 1,000 long URLs, answered and right", () => {
  const line = `Disallow: /${"*a".repeat(19)}*b\n`; // 20 wildcards: within the cap, so kept
  let body = "User-agent: *\n";
  while (body.length + line.length <= 500 * 1024) body += line;
  const r = robots(body);
  const lines = body.split("\n").length - 2;
  assert.deepEqual(r.capped, { ...NOTHING_CAPPED, wildcardRulesDropped: lines - 500 });
  const as = "a".repeat(1_500);
  for (let i = 0; i < 1_000; i++) {
    assert.equal(allowed(r, `/${as}${i}`), true, "no `b`, no match");
  }
  assert.equal(allowed(r, `/${as}b`), false);
  assert.equal(allowed(r, `/${"a".repeat(18)}b`), true, "the pattern needs 19 `a`s");
  assert.equal(allowed(r, `/${"a".repeat(19)}b`), false);
});
