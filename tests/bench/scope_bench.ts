/**
 * Audit scope benchmark (issue 22 audit options): the cost of judging one new URL against the
 * scope's path patterns (`Scope.pathRule`), with the cost of parsing the same URL (`new URL`,
 * which the crawl pays for every link anyway) as the baseline measured in the same run:
 *
 * - typical patterns (`/blog/**`, `/tag/**`, `/search?*`, `/*\/print`) on ordinary paths;
 * - the worst we know within the option bounds: 20 exclude patterns of 10 wildcards each
 *   (`/**a**a…*b<n>`, `/*a*a…*a<n>`) plus an include, against paths of 1,480 `a`s.
 *
 * Run: `deno run -A tests/bench/scope_bench.ts` (part of `deno task bench`).
 */
import { Scope } from "../../domain/audit_engine/scope.ts";

/** Median over rounds of the µs per call of `f` on distinct inputs. */
function usPerCall(f: (i: number) => unknown, calls: number, rounds = 5): number {
  const times: number[] = [];
  let n = 0;
  for (let round = 0; round < rounds; round++) {
    const t = performance.now();
    for (let i = 0; i < calls; i++) f(n++);
    times.push(((performance.now() - t) / calls) * 1000);
  }
  return times.sort((a, b) => a - b)[times.length >> 1];
}

const typical = Scope.of({
  include: ["/blog/**", "/docs/**"],
  exclude: ["/tag/**", "/search?*", "/*/print"],
})!;
const hostile = Scope.of({
  include: ["/**"],
  exclude: Array.from(
    { length: 20 },
    (_, i) => i % 2 ? "/" + "**a".repeat(9) + "*b" + i : "/" + "*a".repeat(10) + i,
  ),
})!;

const shortUrl = (i: number) => `https://example.com/blog/2024/some-post-${i}`;
const longUrl = (i: number) => "https://example.com/" + "a".repeat(1480) + i;

const parseShort = usPerCall((i) => new URL(shortUrl(i)), 20_000);
const typicalUs = usPerCall((i) => typical.pathRule(shortUrl(i)), 20_000);
const parseLong = usPerCall((i) => new URL(longUrl(i)), 2_000);
const hostileUs = usPerCall((i) => hostile.pathRule(longUrl(i)), 2_000);

const f = (x: number) => x.toFixed(1);
console.log(
  `scope typical: ${f(typicalUs)} µs per URL (parsing the URL alone ${f(parseShort)} µs, ` +
    `${f(typicalUs / parseShort)}×)`,
);
console.log(
  `scope worst (20 patterns × 10 wildcards, 1,500-char path): ${f(hostileUs)} µs per URL ` +
    `(parsing the URL alone ${f(parseLong)} µs, ${f(hostileUs / parseLong)}×)`,
);
