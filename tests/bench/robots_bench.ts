/**
 * robots.txt matching benchmark: the cost of one `isAllowed` (distinct URLs, so the memo never
 * answers) on a normal file, which is the baseline measured in the same run, and on hostile ones:
 *
 * - the wildcard bomb: 500 KiB of `Disallow: /*a*a*…*b` lines (20 wildcards each) and URLs of
 *   1,500 `a`s, which cost 2–5 s per call through npm robots-parser 3.0.1 on a 2-core machine;
 * - the worst case we know for our matcher at the default caps: 5,000 rules `/*ab<n>` and paths
 *   of 2,048 `a`s, where every rule scans the whole path (cost ~ maxRules × maxPathLength);
 * - a segment V8's `indexOf` would search quadratically (`a…aca…a`, searched by KMP instead).
 *
 * Also the time to build a Robots from the 500 KiB bomb (a stepped crawl rebuilds it each step).
 *
 * Run: `deno run -A tests/bench/robots_bench.ts` (part of `deno task bench`).
 */
import { makeRobots, type Robots } from "../../domain/audit_engine/robots.ts";

const ORIGIN = "https://example.com";
const make = (body: string) => makeRobots(`${ORIGIN}/robots.txt`, "ok", 200, body);

/** Lines repeated until the file would pass 500 KiB. */
function fill(line: (i: number) => string): string {
  let body = "User-agent: *\n";
  for (let i = 0;; i++) {
    const l = line(i) + "\n";
    if (body.length + l.length > 500 * 1024) return body;
    body += l;
  }
}

/** Median over rounds of the ms per isAllowed call, each call on a URL not asked before. */
function msPerCall(r: Robots, path: (i: number) => string, calls: number, rounds = 5): number {
  const times: number[] = [];
  let n = 0;
  for (let round = 0; round < rounds; round++) {
    const t = performance.now();
    for (let i = 0; i < calls; i++) r.isAllowed(ORIGIN + path(n++));
    times.push((performance.now() - t) / calls);
  }
  return times.sort((a, b) => a - b)[times.length >> 1];
}

const NORMAL = `User-agent: *
Disallow: /admin/
Disallow: /cart
Disallow: /checkout/
Disallow: /account/
Disallow: /search
Disallow: /*?sort=
Disallow: /*?filter=
Disallow: /*.pdf$
Allow: /search/help
Allow: /account/signup
Crawl-delay: 1

User-agent: Googlebot
Disallow: /internal/
Allow: /*.css$
Allow: /*.js$

User-agent: GPTBot
Disallow: /

Sitemap: ${ORIGIN}/sitemap.xml
`;
const normal = msPerCall(
  make(NORMAL),
  (i) => `/blog/2024/${i}/a-post-about-things?page=${i % 7}`,
  20_000,
  9,
);

const bombBody = fill(() => `Disallow: /${"*a".repeat(19)}*b`);
const t0 = performance.now();
const bombRobots = make(bombBody);
const buildMs = performance.now() - t0;
const as = "a".repeat(1_500);
const bomb = msPerCall(bombRobots, (i) => `/${as}${i}`, 200);

const worstRobots = make(fill((i) => `Disallow: /*ab${i}`));
const worst = msPerCall(worstRobots, (i) => `/${"a".repeat(2_047 - String(i).length)}${i}`, 20);

const needle = "a".repeat(10) + "c" + "a".repeat(300);
const kmp = msPerCall(
  make(fill((i) => `Disallow: /*${needle}${i % 10}`)),
  (i) => `/${"a".repeat(2_000)}${i}`,
  20,
);

const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
const ratio = (ms: number) => `${(ms / normal).toFixed(0)}× normal`;
console.log(`robots: normal file (20 rules, 3 groups) ${us(normal)} per isAllowed (baseline)`);
const bombLines = bombBody.split("\n").length - 2;
console.log(
  `robots: wildcard bomb (${bombLines} lines, ${bombLines - bombRobots.capped.rulesDropped} ` +
    `kept, 1,500-char URLs) ${bomb.toFixed(3)} ms per isAllowed = ${ratio(bomb)} ` +
    `(robots-parser: 2,000–5,000 ms); building it ${buildMs.toFixed(0)} ms`,
);
console.log(
  `robots: worst case at the caps (5,000 rules scanning 2,048-octet paths) ${
    worst.toFixed(2)
  } ms per isAllowed = ${ratio(worst)}`,
);
console.log(
  `robots: 311-char segments V8's indexOf would search quadratically (KMP) ${
    kmp.toFixed(2)
  } ms per isAllowed = ${ratio(kmp)}`,
);
