/**
 * A crawled site of any size written straight to KV in the crawl's own formats (records, link
 * chunks, the duplicate index), so the site-wide passes (finalize.ts) can be run and measured at
 * 50,000 or 1,000,000 pages without fetching them. The expected findings are computed here from
 * the same rules that generate the site, independently of the passes.
 *
 * The site: page 0 is the start URL; every 1000th page (i % 1000 = 999) answers 404, every
 * 1000th (i % 1000 = 500) redirects 301 to the next page (with `period` 10 instead of 1000, one
 * page in ten of each: a site whose redirect and failing URLs grow with it); the rest are HTML
 * 200 pages, each
 * linking to the start page, the next page, its "parent" (i / 2) and a far page ((7i + 3) % n),
 * titled "Page i" except pages i % 1000 ∈ {10, 11}, which share a title per thousand, and pages
 * i % 1000 ∈ [100, 300), which share one title (the duplicate pass sums up a text more pages share
 * than it holds at once).
 *
 * The bench and the memory test run the passes in a child process (finalize_child.ts) so the
 * child's peak RSS is the passes' alone.
 *
 * @module
 */
import { WORKER_MALLOC_ARENAS } from "../../jobs/worker_child.ts";
import { keys } from "../../domain/platform/mod.ts";
import { newPace } from "../../domain/audit_engine/crawl/politeness.ts";
import {
  newRecord,
  urlHash,
  WriteBatch,
  writeLinks,
} from "../../domain/audit_engine/crawl/store.ts";
import { DupRuns } from "../../domain/audit_engine/crawl/dup_runs.ts";
import type { CrawlState } from "../../domain/audit_engine/crawl/state.ts";
import { NearRuns } from "../../domain/audit_engine/crawl/page_recorder.ts";
import { SIG_BINS } from "../../domain/audit_engine/text_fingerprint.ts";
import { sampleUrl } from "../../domain/audit_engine/crawl/url_sample.ts";

export const SYNTH_ORIGIN = "http://127.0.0.1:9";

export const synthUrl = (i: number): string =>
  i === 0 ? `${SYNTH_ORIGIN}/` : `${SYNTH_ORIGIN}/p/${i}`;

type Kind = "html" | "broken" | "redirect";

/** The position in each period of its redirect (its last is broken): odd periods have one too. */
export const redirectAt = (period: number): number => Math.floor(period / 2);

/** What the generator made page i of an n-page site. */
export function synthKind(i: number, n: number, period = 1000): Kind {
  if (i > 0 && i % period === period - 1) return "broken";
  if (i > 0 && i % period === redirectAt(period) && i + 1 < n) return "redirect";
  return "html";
}

/** A page's number from its URL (-1 for none). */
export function synthPage(url: unknown): number {
  if (url === synthUrl(0)) return 0;
  const m = typeof url === "string" && /\/p\/(\d+)$/.exec(url);
  return m ? Number(m[1]) : -1;
}

/** A page's distinct internal link targets (never itself), as page numbers. */
export function synthLinks(i: number, n: number): number[] {
  const out = new Set([0, i + 1, Math.floor(i / 2), (7 * i + 3) % n]);
  out.delete(i);
  for (const t of out) if (t >= n) out.delete(t);
  return [...out];
}

function titleOf(i: number): string {
  const r = i % 1000;
  if (r >= 100 && r < 300) return "One title for a fifth of the site";
  return r === 10 || r === 11 ? `Shared ${Math.floor(i / 1000)}` : `Page ${i}`;
}

/**
 * The crawl state the passes read, as the crawl leaves it at `finalize`: with the sample of its
 * URLs a crawl keeps, so the record passes read in ranges as they do after a real crawl.
 */
export function synthState(n: number): CrawlState {
  const urlSample = { h: [] as number[], u: [] as string[] };
  for (let i = 0; i < n; i++) sampleUrl(urlSample, urlHash(synthUrl(i)), synthUrl(i));
  return {
    urlSample,
    v: 1,
    phase: "finalize",
    startUrl: synthUrl(0),
    origin: SYNTH_ORIGIN,
    siteKey: "127.0.0.1",
    startChecked: true,
    ownBotBlocked: false,
    startBlockedForGoogle: false,
    robots: {},
    robotsProblems: [],
    crawlDelayMs: 0,
    nextSlotAt: 0,
    sitemap: { found: false, problems: [], urlCount: 0 },
    sitemapChunks: 0,
    seedChunk: 0,
    httpProbe: "not_applicable",
    head: n,
    tail: n,
    fetches: n,
    completed: n,
    failed: 0,
    bytes: 0,
    truncated: false,
    tallies: {},
    stored: {},
    banners: 0,
    sitePages: 0,
    language: null,
    steps: 1,
    result: null,
    capsHit: {},
    pace: newPace(),
  };
}

/**
 * A page's text signature when `near` is asked for: distinct for every page, except that page
 * i % 1000 = 21 is a near-duplicate of the page before it (4 of 64 bins differ, one in each of
 * four bands: the other twelve bands share their bucket).
 */
function synthSig(i: number): Uint16Array {
  const sig = new Uint16Array(SIG_BINS);
  const twin = i % 1000 === 21;
  let x = (twin ? i : i + 1) * 2_654_435_761;
  for (let k = 0; k < SIG_BINS; k++) {
    x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) ^ k;
    sig[k] = (x >>> 0) % 0xffff;
  }
  if (twin) { for (const k of [0, 16, 32, 48]) sig[k] = (sig[k] + 1) % 0xffff; }
  return sig;
}

/**
 * Writes the n-page site's records, links and title index under `auditId`; with `near`, its HTML
 * pages' text signatures and LSH band runs too (as the crawl writes them: page_recorder.ts
 * `NearRuns`), so the near-duplicate pass reads every band of a site of that size; with `extra`,
 * that many more links a page (as big_site.ts links: the expectations below do not count them).
 */
export async function writeSyntheticCrawl(
  kv: Deno.Kv,
  auditId: string,
  n: number,
  period = 1000,
  near = false,
  /** Links per page added to the generator's few (a bench's realistic page; tests: none). */
  extra = 0,
): Promise<void> {
  const batch = new WriteBatch(kv);
  let runs = new NearRuns();
  let dups = new DupRuns();
  for (let i = 0; i < n; i++) {
    const url = synthUrl(i);
    const rec = newRecord(url, i, i === 0 ? 0 : 1, false);
    rec.state = "fetched";
    const kind = synthKind(i, n, period);
    if (kind === "broken") rec.status = 404;
    else if (kind === "redirect") {
      rec.status = 301;
      rec.location = synthUrl(i + 1);
    } else {
      const targets = new Set(synthLinks(i, n));
      for (let k = 1; k <= extra; k++) targets.add((i * 7 + k * 13) % n);
      targets.delete(i);
      const links = [...targets].map(synthUrl);
      rec.status = 200;
      rec.html = true;
      rec.title = titleOf(i);
      rec.words = 300;
      rec.textHash = urlHash(url);
      rec.outlinks = links.length;
      writeLinks(batch, auditId, url, {
        links,
        nofollowLinks: [],
        linkAnchors: links.map(() => "more"),
        nofollowAnchors: [],
      });
      dups.add("title", rec.title, url);
      if (near) {
        const sig = synthSig(i);
        runs.add(sig, rec.hash);
        batch.set(keys.auditNearSig(auditId, rec.hash), { u: url, h: rec.textHash, s: sig });
      }
    }
    batch.set(keys.auditPage(auditId, url), rec);
    // Flushed as it goes: the writer's memory stays one commit's worth.
    if (i % 2000 === 1999) {
      runs.write(batch, auditId);
      runs = new NearRuns();
      dups.write(batch, auditId);
      dups = new DupRuns();
      await batch.flush();
    }
  }
  runs.write(batch, auditId);
  dups.write(batch, auditId);
  await batch.flush();
}

/** What the passes must find on the n-page site, computed from the generator's rules alone. */
export interface SynthExpected {
  htmlPages: number;
  /** HTML pages linking at least one 404 page. */
  pagesLinkingBroken: number;
  /** HTML pages linking at least one redirect. */
  pagesLinkingRedirects: number;
  /** Pages in a group of equal titles. */
  duplicateTitles: number;
  /** Followable inlinks of a few pages (page number → count). */
  inlinks: Map<number, number>;
  /** Pages with a near-duplicate, when the crawl was written with `near`. */
  nearDuplicates: number;
}

/** Expected findings; `probe`: the pages whose inlinks are counted. */
export function synthExpected(n: number, probe: number[], period = 1000): SynthExpected {
  const want = new Set(probe);
  const inlinks = new Map(probe.map((p) => [p, 0]));
  const titles = new Map<string, number>();
  let htmlPages = 0, pagesLinkingBroken = 0, pagesLinkingRedirects = 0;
  for (let i = 0; i < n; i++) {
    if (synthKind(i, n, period) !== "html") continue;
    htmlPages++;
    const t = titleOf(i);
    titles.set(t, (titles.get(t) ?? 0) + 1);
    const links = synthLinks(i, n);
    if (links.some((t) => synthKind(t, n, period) === "broken")) pagesLinkingBroken++;
    if (links.some((t) => synthKind(t, n, period) === "redirect")) pagesLinkingRedirects++;
    for (const t of links) if (want.has(t)) inlinks.set(t, inlinks.get(t)! + 1);
  }
  let duplicateTitles = 0;
  for (const c of titles.values()) if (c > 1) duplicateTitles += c;
  let nearDuplicates = 0;
  for (let i = 21; i < n; i += 1000) {
    if (synthKind(i, n, period) === "html" && synthKind(i - 1, n, period) === "html") {
      nearDuplicates += 2;
    }
  }
  return {
    htmlPages,
    pagesLinkingBroken,
    pagesLinkingRedirects,
    duplicateTitles,
    inlinks,
    nearDuplicates,
  };
}

/** What finalize_child.ts prints. Bytes; `hwm`: the kernel's peak RSS of the whole child. */
export interface FinalizeRun {
  hwm: number;
  anon: number;
  file: number;
  before: number;
  rssPeak: number;
  heapPeak: number;
  externalPeak: number;
  secs: number;
  tallies: Record<string, [number, number]>;
  /** The first stored item of broken_internal_links and internal_redirect_links. */
  first: Record<string, Record<string, unknown>>;
  records: Record<number, { inlinks: number; linkScore: number | null }>;
}

const CHILD = new URL("./finalize_child.ts", import.meta.url).pathname;
const REPO = new URL("../../", import.meta.url).pathname;

/**
 * Runs the site-wide passes over the crawl at `kvPath` in a child process with `v8Flags` (say
 * `--max-old-space-size=32`); rejects with the child's output when it fails (a heap past the
 * cap ends it with "out of memory").
 */
export async function runFinalizeChild(
  kvPath: string,
  auditId: string,
  n: number,
  probe: number[],
  v8Flags: string[],
): Promise<FinalizeRun> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      // Every permission: Deno reads /proc/self/status (the kernel's RSS figures) only under -A.
      "--allow-all",
      "--unstable-kv",
      `--v8-flags=${v8Flags.join(",")}`,
      CHILD,
      kvPath,
      auditId,
      String(n),
      probe.join(","),
    ],
    cwd: REPO,
    // glibc's arenas as the worker child has them (jobs/worker_child.ts).
    env: { MALLOC_ARENA_MAX: Deno.env.get("MALLOC_ARENA_MAX") ?? WORKER_MALLOC_ARENAS },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(
      `finalize child exited ${out.code}: ${text}${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return JSON.parse(text.trim().split("\n").at(-1)!);
}
