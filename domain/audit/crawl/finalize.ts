/**
 * The crawl's last step: site-wide checks computed from the stored facts, reading KV in pages
 * and keeping only counters, capped item lists and compact aggregates (URL hash → inlink count,
 * the redirect map, the set of broken targets). Passes:
 *
 * 1. records: statuses, failures, robots blocks, sitemap entries, canonical targets, TTFB,
 *    redirects and broken targets;
 * 2. link graph: inlink counts, links to broken and redirecting URLs (with anchor texts), the
 *    link score (link_score.ts); then the failing URLs no other check charges (each defect is
 *    counted once, where it is fixed);
 * 3. duplicate index: groups of equal titles, descriptions and text fingerprints, then the LSH
 *    band index for near-duplicates (pages sharing a band are compared, at most
 *    NEAR_MAX_COMPARE signatures held per band bucket);
 * 4. records again: orphans, and each record gets its inlinks, link score and the site checks
 *    that hit it.
 *
 * Memory besides the capped item lists: one number per URL for inlinks, and per failing,
 * redirecting or near-duplicate URL, and per group of identical texts; never a page's facts.
 *
 * Then every site check reads the resulting `SiteFacts`, its evidence is stored, and the audit
 * is scored. Repeating this step (a process died in it) gives the same result.
 *
 * @module
 */
import { keys } from "../../../kv/keys.ts";
import { ALL_CHECKS, SITE_CHECKS } from "../checks/index.ts";
import { singleInlinkApplies } from "../checks/structure.ts";
import { scoreAudit } from "../scoring.ts";
import { similarity } from "../text_fingerprint.ts";
import { LinkScores } from "./link_score.ts";
import type {
  CheckTally,
  Evidence,
  ItemGroup,
  SiteFacts,
  SiteOutcome,
  UrlSummary,
} from "../types.ts";
import type { CrawlOutcome, CrawlState } from "./state.ts";
import {
  type DupEntry,
  FINDINGS_CAP,
  FindingsWriter,
  getMany,
  getPages,
  listInPages,
  type PageRecord,
  urlHash,
  WriteBatch,
} from "./store.ts";

/** Failed fetches kept in `SiteFacts.records` (a sample for checks that read URLs one by one). */
const RECORD_SAMPLE = 200;
const MAX_HOPS = 10;
const TTFB_BUCKETS = 60_001;
/** Estimated Jaccard similarity of word 3-shingles from which pages are near-duplicates. */
const NEAR_SIMILARITY = 0.8;
/** Signatures held per band bucket: each page is compared with at most this many. */
export const NEAR_MAX_COMPARE = 200;
/** Signatures kept read in the near-duplicate pass (~0.3 KB each). */
const NEAR_SIG_CACHE = 4_096;
/** Text signatures only pages with this many words get (engine.ts indexes them). */
const DUP_MIN_WORDS = 20;

/** A failing URL and the status check that charges it unless another check does. */
interface Failing {
  url: string;
  kind: "4xx" | "5xx" | "failed";
  item: Evidence;
}

class Group implements ItemGroup {
  count = 0;
  items: Evidence[] = [];
  add(item: Evidence, counts = true): void {
    if (counts) this.count++;
    if (this.items.length < FINDINGS_CAP) this.items.push(item);
  }
}

function summary(r: PageRecord): UrlSummary {
  return {
    url: r.url,
    state: r.state,
    status: r.status,
    failure: r.failure,
    html: r.html,
    noindex: r.noindex,
  };
}

/** A non-HTML file kept out of the index by its X-Robots-Tag (noindex or none). */
const nonHtmlNoindex = (r: PageRecord) =>
  !r.html && r.nonHtmlRobots !== undefined && /\b(noindex|none)\b/.test(r.nonHtmlRobots.tag);
const is2xx = (r: PageRecord) => r.status >= 200 && r.status < 300;
const attempted = (r: PageRecord) => r.state === "fetched" || r.state === "failed";

/** Computes the site checks, stores their evidence and returns the scored outcome. */
export async function finalizeCrawl(
  kv: Deno.Kv,
  auditId: string,
  state: CrawlState,
): Promise<CrawlOutcome> {
  const f = emptyFacts(state);
  const batch = new WriteBatch(kv);
  const findings = new FindingsWriter(batch, auditId, state.stored);

  // Pass 1: records.
  const redirects = new Map<string, string>(); // internal redirect: url -> target
  const broken = new Map<number, { url: string; status: number; failure: string | null }>();
  // Failing URLs by hash, and those another check charges (see `chargedElsewhere` below).
  const failing = new Map<number, Failing>();
  const charged = new Set<number>();
  const markLater = new Set<string>([state.startUrl]);
  const ttfb = new Uint32Array(TTFB_BUCKETS);
  let firstHttps: UrlSummary | null = null;
  const failedSample: UrlSummary[] = [];
  const linkScores = new LinkScores();
  for await (const page of listInPages<PageRecord>(kv, keys.auditPages(auditId))) {
    const canon: PageRecord[] = [];
    const alternates: PageRecord[] = [];
    for (const { value: r } of page) {
      if (attempted(r)) {
        f.attempted++;
        if (firstHttps === null && r.url.startsWith("https:")) firstHttps = summary(r);
        if (r.state === "failed") {
          // TLS failures are tls_invalid's (it reads the sample), not fetch_failed's.
          if (r.failure !== "tls") {
            failing.set(r.hash, {
              url: r.url,
              kind: "failed",
              item: { url: r.url, failure: r.failure },
            });
          }
          if (failedSample.length < RECORD_SAMPLE) failedSample.push(summary(r));
        } else if (r.status >= 400) {
          failing.set(r.hash, {
            url: r.url,
            kind: r.status < 500 ? "4xx" : "5xx",
            item: { url: r.url, status: r.status },
          });
        }
        if (r.state === "failed" || (r.location === null && r.status >= 400)) {
          broken.set(r.hash, { url: r.url, status: r.status, failure: r.failure });
        }
        if (r.location !== null && !r.externalLocation) redirects.set(r.url, r.location);
        if (r.inSitemap && (failing.has(r.hash) || redirects.has(r.url))) markLater.add(r.url);
      }
      if (r.state !== "unvisited" && r.state !== "queued") {
        f.known++;
        if (r.state === "blocked") f.blocked.add({ url: r.url });
      }
      if (r.html && is2xx(r)) {
        f.html2xx++;
        if (r.state === "fetched") linkScores.addPage(r.hash);
        if (r.noindex) f.noindexPages++;
        else if (r.canonicalOther === null) {
          f.dupCandidates++;
          if (r.words >= DUP_MIN_WORDS) f.nearCandidates++;
          // Indexable, self-canonical and reached through links: it belongs in the sitemap.
          if (r.state === "fetched" && r.depth >= 0) {
            f.sitemapCandidates++;
            if (!r.inSitemap) f.sitemapMissing.add({ url: r.url, depth: r.depth });
          }
        }
        const ms = Math.min(TTFB_BUCKETS - 1, Math.max(0, Math.round(r.ttfbMs)));
        ttfb[ms]++;
        f.ttfb.pages++;
        if (r.ttfbMs > 800) f.ttfb.over800.add({ url: r.url, ttfb_ms: ms });
        if (r.ttfbMs > 1800) f.ttfb.over1800.add({ url: r.url, ttfb_ms: ms });
        if (r.canonicalOther !== null) canon.push(r);
        if (r.hreflang?.length) alternates.push(r);
      }
      if (r.state === "fetched" && !r.html && is2xx(r)) {
        f.nonHtml2xx++;
        if (r.nonHtmlRobots) {
          f.xRobotsNonHtml.add({
            url: r.url,
            x_robots_tag: r.nonHtmlRobots.tag,
            content_type: r.nonHtmlRobots.type,
          });
        }
      }
      if (r.inSitemap && (attempted(r) || r.state === "blocked")) {
        f.sitemapListed++;
        const reason = r.state === "blocked"
          ? "blocked by robots.txt"
          : r.state === "failed"
          ? "fetch failed"
          : !is2xx(r)
          ? (r.location !== null ? "redirects" : "error status")
          : r.noindex
          ? "noindex"
          : nonHtmlNoindex(r)
          ? "noindex (X-Robots-Tag)"
          : r.canonicalOther !== null
          ? "canonicalised to another URL"
          : null;
        if (reason !== null) {
          f.sitemapBad.add({ url: r.url, status: r.status || null, reason });
        }
      }
    }
    await canonicalTargets(kv, auditId, canon, f, markLater);
    await hreflangAlternates(kv, auditId, alternates, f, markLater);
  }
  f.ttfb.medianMs = median(ttfb, f.ttfb.pages);

  // The start, the home page at the end of its redirects, redirect chains and loops.
  const [startRec] = await getPages(kv, auditId, [state.startUrl]);
  if (startRec) f.start = summary(startRec);
  const homeUrl = followRedirects(redirects, state.startUrl);
  if (homeUrl === null) f.home = null;
  else if (homeUrl === state.startUrl) f.home = f.start;
  else {
    const [h] = await getPages(kv, auditId, [homeUrl]);
    f.home = h ? summary(h) : null;
  }
  chains(redirects, broken, f);
  const sample = [f.start, ...(f.home && f.home !== f.start ? [f.home] : [])];
  if (firstHttps) sample.push(firstHttps);
  f.records = [...sample, ...failedSample];

  // Redirects that end broken are broken link targets too; redirects are "redirect" targets. A
  // loop is not a broken target: the loop is one defect, charged once as redirect_loop.
  const redirectTargets = new Map<number, { url: string; target: string }>();
  for (const [url, target] of redirects) {
    redirectTargets.set(urlHash(url), { url, target });
    const end = followRedirects(redirects, url);
    if (end !== null && broken.has(urlHash(end)) && !broken.has(urlHash(url))) {
      const b = broken.get(urlHash(end))!;
      broken.set(urlHash(url), { url, status: b.status, failure: b.failure });
    }
  }

  /**
   * Failing URLs another check already charges, so each defect counts once, where it is fixed:
   * the start and home page (home_page_error), URLs crawled pages link to, directly or through
   * redirects (broken_internal_links, on the linking pages), sitemap entries
   * (sitemap_bad_entries), canonical targets (canonical_target_bad) and hreflang alternates
   * (hreflang_target_bad). Each hop of the URL's redirects is marked too (a link to a redirect
   * to a 404 is a broken link). What is left (a redirect or meta-refresh target nothing else
   * points at) is charged by the status checks.
   */
  const chargeFrom = (url: string) => {
    let cur = url;
    for (let i = 0; i <= MAX_HOPS; i++) {
      const h = urlHash(cur);
      if (failing.has(h)) charged.add(h);
      const next = redirects.get(cur);
      if (next === undefined) return;
      cur = next;
    }
  };
  for (const url of markLater) chargeFrom(url);
  markLater.clear();

  // Pass 2: the link graph. A URL's first followable linker is kept as a hash (one more number
  // per URL) so a page with a single inlink can name it.
  const inlinks = new Map<number, number>();
  const firstLinker = new Map<number, number>();
  let src = "";
  let srcBroken = false;
  let srcRedirect = false;
  for await (
    const page of listInPages<{ t: number[]; a: string[]; f: number }>(
      kv,
      keys.auditLinksAll(auditId),
    )
  ) {
    for (const e of page) {
      const url = e.key[2] as string;
      const self = urlHash(url);
      if (url !== src) {
        src = url;
        srcBroken = srcRedirect = false;
        linkScores.beginPage(self);
      }
      const { t, a, f: followable } = e.value;
      for (let i = 0; i < t.length; i++) {
        const h = t[i];
        if (failing.has(h)) charged.add(h);
        const via = redirectTargets.get(h);
        if (via !== undefined) chargeFrom(via.url);
        if (h === self) continue;
        if (i < followable) {
          if (!linkScores.addLink(h) && via !== undefined) {
            const end = followRedirects(redirects, via.url);
            if (end !== null) linkScores.addLink(urlHash(end));
          }
          const n = inlinks.get(h) ?? 0;
          inlinks.set(h, n + 1);
          if (n === 0) firstLinker.set(h, self);
        }
        const b = broken.get(h);
        if (b) {
          f.brokenLinks.add(
            {
              url,
              target: b.url,
              anchor: a[i] ?? "",
              status: b.status || null,
              failure: b.failure,
            },
            !srcBroken,
          );
          srcBroken = true;
        }
        const r = redirectTargets.get(h);
        if (r !== undefined) {
          f.redirectLinks.add(
            { url, target: r.url, anchor: a[i] ?? "", redirects_to: r.target },
            !srcRedirect,
          );
          srcRedirect = true;
        }
      }
    }
  }

  await linkScores.compute();

  // The failing URLs left to the status checks.
  for (const [h, x] of failing) {
    if (charged.has(h)) continue;
    (x.kind === "4xx" ? f.status4xx : x.kind === "5xx" ? f.status5xx : f.failed).add(x.item);
  }
  failing.clear();
  charged.clear();

  // Pass 3: duplicate groups, then near-duplicates (identical twins are duplicate_content's).
  await duplicates(kv, auditId, "title", f.dupTitle, (v) => ({ title: v }));
  await duplicates(kv, auditId, "description", f.dupDescription, (v) => ({ description: v }));
  const twins = new Set<number>();
  await duplicates(
    kv,
    auditId,
    "content",
    f.dupContent,
    (v) => ({ fingerprint: v }),
    (v) => twins.add(Number(v)),
    { case: f.caseDuplicates, param: f.parameterDuplicates },
  );
  await nearDuplicates(kv, auditId, twins, f.nearDupContent);

  // Which site checks hit which page (for the inventory), before orphans are known.
  const marks = new Map<string, Set<string>>();
  const markFired = (outcomes: Map<string, SiteOutcome | null>) => {
    for (const [id, o] of outcomes) {
      if (!o || o.affected === 0 || !o.items) continue;
      for (const item of o.items) {
        if (typeof item.url !== "string") continue;
        let set = marks.get(item.url);
        if (!set) marks.set(item.url, set = new Set());
        set.add(id);
      }
    }
  };
  markFired(evaluateSite(f));

  // Pass 4: records again: orphans, single-inlink pages, inlinks and site checks onto each
  // record. Single-inlink items wait for their linker's URL (pass 5).
  const singles: { item: Evidence; linker: number }[] = [];
  for await (const page of listInPages<PageRecord>(kv, keys.auditPages(auditId))) {
    for (const { value: r } of page) {
      const inl = inlinks.get(r.hash) ?? 0;
      let orphan = false;
      if (
        !state.truncated && r.inSitemap && r.state === "fetched" && r.html && is2xx(r) &&
        r.url !== f.start.url && r.url !== f.home?.url
      ) {
        f.orphanCandidates++;
        if (inl === 0) {
          orphan = true;
          f.orphans.add({ url: r.url, inlinks: 0 });
        }
      }
      let single = false;
      if (
        r.state === "fetched" && r.html && is2xx(r) && !r.noindex && r.canonicalOther === null &&
        r.url !== f.start.url && r.url !== f.home?.url
      ) {
        f.inlinkCandidates++;
        if (inl === 1) {
          single = true;
          const item: Evidence = { url: r.url, inlinks: 1, linked_from: null };
          if (f.singleInlink.items.length < FINDINGS_CAP) {
            singles.push({ item, linker: firstLinker.get(r.hash) ?? -1 });
          }
          f.singleInlink.add(item);
        }
      }
      const site = marks.get(r.url);
      const checks = new Set(r.checks);
      if (site) { for (const c of site) checks.add(c); }
      if (orphan) checks.add("orphan_page");
      if (single && singleInlinkApplies(f)) checks.add("single_inlink_pages");
      const linkScore = linkScores.scoreOf(r.hash) ?? undefined;
      if (r.inlinks !== inl || checks.size !== r.checks.length || r.linkScore !== linkScore) {
        const next: PageRecord = { ...r, inlinks: inl, checks: [...checks] };
        if (linkScore === undefined) delete next.linkScore;
        else next.linkScore = linkScore;
        batch.set(keys.auditPage(auditId, r.url), next);
      }
    }
  }

  firstLinker.clear();
  await nameLinkers(kv, auditId, singles);

  // Every site check, with its evidence stored.
  const outcomes = evaluateSite(f);
  const tallies = new Map<string, CheckTally>();
  for (const [id, [eligible, affected]] of Object.entries(state.tallies)) {
    tallies.set(id, { eligible, affected });
  }
  for (const [id, o] of outcomes) {
    if (!o) continue;
    tallies.set(id, { eligible: o.eligible, affected: o.affected });
    // A site check that names no item is about the site: its evidence is the start URL.
    if (o.affected > 0) findings.add(id, "", o.items?.length ? o.items : [{ url: state.startUrl }]);
  }
  await batch.flush();
  const scored = scoreAudit(ALL_CHECKS, tallies);
  const plain: Record<string, [number, number]> = {};
  for (const [id, t] of tallies) plain[id] = [t.eligible, t.affected];
  return {
    score: scored.score,
    summary: scored.summary,
    pagesCrawled: state.completed + state.failed,
    jobsCompleted: state.completed,
    jobsFailed: state.failed,
    tallies: plain,
    host: new URL(state.startUrl).host,
    language: state.language,
    truncated: state.truncated,
    limitsHit: state.capsHit ?? {},
  };
}

/**
 * Pass 5, only when single-inlink pages were found: one more read of the records to name each
 * one's linking page (at most FINDINGS_CAP hashes held).
 */
async function nameLinkers(
  kv: Deno.Kv,
  auditId: string,
  singles: { item: Evidence; linker: number }[],
): Promise<void> {
  if (singles.length === 0) return;
  const wanted = new Map<number, Evidence[]>();
  for (const s of singles) {
    const list = wanted.get(s.linker);
    if (list) list.push(s.item);
    else wanted.set(s.linker, [s.item]);
  }
  for await (const page of listInPages<PageRecord>(kv, keys.auditPages(auditId))) {
    for (const { value: r } of page) {
      for (const item of wanted.get(r.hash) ?? []) item.linked_from = r.url;
    }
  }
}

function evaluateSite(f: SiteFacts) {
  return new Map(SITE_CHECKS.map((c) => [c.id, c.evaluate(f)] as const));
}

function emptyFacts(state: CrawlState): SiteFacts & {
  status4xx: Group;
  status5xx: Group;
  failed: Group;
  blocked: Group;
  sitemapBad: Group;
  canonicalBad: Group;
  canonicalChains: Group;
  sitemapMissing: Group;
  singleInlink: Group;
  xRobotsNonHtml: Group;
  hreflangPages: number;
  hreflangNoReturn: Group;
  hreflangTargetPages: number;
  hreflangTargetBad: Group;
  brokenLinks: Group;
  redirectLinks: Group;
  redirectChains: Group;
  redirectLoops: Group;
  dupTitle: Group;
  dupDescription: Group;
  dupContent: Group;
  caseDuplicates: Group;
  parameterDuplicates: Group;
  nearDupContent: Group;
  orphans: Group;
  ttfb: { pages: number; medianMs: number; over800: Group; over1800: Group };
} {
  const start: UrlSummary = {
    url: state.startUrl,
    state: "unvisited",
    status: 0,
    failure: null,
    html: false,
    noindex: false,
  };
  const robots = state.robots[state.origin];
  return {
    startUrl: state.startUrl,
    siteKey: state.siteKey,
    start,
    home: start,
    robots: {
      state: robots?.state ?? "unreachable",
      status: robots?.status ?? 0,
      url: robots?.url ?? `${state.origin}/robots.txt`,
      problems: state.robotsProblems,
      startBlockedForGoogle: state.startBlockedForGoogle,
    },
    ownBotBlocked: state.ownBotBlocked,
    sitemap: state.sitemap,
    httpProbe: state.httpProbe,
    truncated: state.truncated,
    records: [],
    attempted: 0,
    status4xx: new Group(),
    status5xx: new Group(),
    failed: new Group(),
    known: 0,
    blocked: new Group(),
    html2xx: 0,
    noindexPages: 0,
    sitemapListed: 0,
    sitemapBad: new Group(),
    canonicalTargets: 0,
    canonicalBad: new Group(),
    canonicalChains: new Group(),
    sitemapCandidates: 0,
    sitemapMissing: new Group(),
    inlinkCandidates: 0,
    singleInlink: new Group(),
    nonHtml2xx: 0,
    xRobotsNonHtml: new Group(),
    hreflangPages: 0,
    hreflangNoReturn: new Group(),
    hreflangTargetPages: 0,
    hreflangTargetBad: new Group(),
    brokenLinks: new Group(),
    redirectLinks: new Group(),
    redirectStarts: 0,
    redirectChains: new Group(),
    redirectLoops: new Group(),
    dupCandidates: 0,
    dupTitle: new Group(),
    dupDescription: new Group(),
    dupContent: new Group(),
    caseDuplicates: new Group(),
    parameterDuplicates: new Group(),
    nearCandidates: 0,
    nearDupContent: new Group(),
    orphanCandidates: 0,
    orphans: new Group(),
    ttfb: { pages: 0, medianMs: 0, over800: new Group(), over1800: new Group() },
  };
}

function median(hist: Uint32Array, n: number): number {
  if (n === 0) return 0;
  const lo = (n - 1) >> 1;
  const hi = n >> 1;
  let seen = 0;
  let a = -1;
  for (let ms = 0; ms < hist.length; ms++) {
    seen += hist[ms];
    if (a < 0 && seen > lo) a = ms;
    if (seen > hi) return (a + ms) / 2;
  }
  return a;
}

/** Where a URL's internal redirects end, or null on a loop / more than 10 hops. */
function followRedirects(redirects: Map<string, string>, url: string): string | null {
  let cur = url;
  for (let i = 0; i <= MAX_HOPS; i++) {
    const next = redirects.get(cur);
    if (next === undefined) return cur;
    cur = next;
  }
  return null;
}

/** Redirect chains from every redirecting URL that no other redirect points at; cycles once. */
function chains(
  redirects: Map<string, string>,
  broken: Map<number, { status: number }>,
  f: ReturnType<typeof emptyFacts>,
): void {
  const pointedAt = new Set(redirects.values());
  for (const url of redirects.keys()) {
    const hops = [url];
    const seen = new Set(hops);
    let cur = url;
    let loop = false;
    while (redirects.has(cur)) {
      cur = redirects.get(cur)!;
      hops.push(cur);
      if (seen.has(cur) || hops.length > MAX_HOPS + 1) {
        loop = true;
        break;
      }
      seen.add(cur);
    }
    // Chain heads only; members of a pure cycle have no head, so count the cycle once, from its
    // smallest URL.
    const smallest = [...seen].sort()[0];
    if (pointedAt.has(url) && !(loop && smallest === url && cur === url)) continue;
    f.redirectStarts++;
    const item = { url, hops: hops.slice(0, 12), hop_count: hops.length - 1 };
    if (loop) f.redirectLoops.add(item);
    else if (hops.length - 1 >= 2) {
      f.redirectChains.add({ ...item, final_status: broken.get(urlHash(cur))?.status ?? null });
    }
  }
}

/**
 * Canonical targets of a page of records: crawled targets that are not indexable 200 pages
 * (canonical_target_bad), and indexable targets that canonicalise elsewhere (canonical_chain).
 */
async function canonicalTargets(
  kv: Deno.Kv,
  auditId: string,
  pages: PageRecord[],
  f: ReturnType<typeof emptyFacts>,
  markLater: Set<string>,
): Promise<void> {
  if (pages.length === 0) return;
  const targets = await getPages(kv, auditId, pages.map((p) => p.canonicalOther!));
  const chains: { chain: string[]; loop: boolean }[] = [];
  pages.forEach((p, i) => {
    const t = targets[i];
    if (!t || t.state === "unvisited" || t.state === "queued") return;
    f.canonicalTargets++;
    if (t.state === "failed" || t.status >= 300) markLater.add(t.url);
    const bad = t.state !== "fetched" || !is2xx(t) || t.noindex;
    if (bad) {
      f.canonicalBad.add({
        url: p.url,
        canonical: t.url,
        target_status: t.status || null,
        reason: t.state === "blocked"
          ? "blocked by robots.txt"
          : t.state === "failed"
          ? "fetch failed"
          : t.location !== null
          ? "redirects"
          : !is2xx(t)
          ? "error status"
          : "noindex",
      });
    } else if (t.canonicalOther !== null) {
      // The target is an indexable 200 page that names another canonical: a chain (or a loop),
      // which search engines may not follow to its end. Followed below, hop by hop.
      chains.push({ chain: [p.url, t.url, t.canonicalOther], loop: t.canonicalOther === p.url });
    }
  });
  await followCanonicalChains(kv, auditId, chains);
  for (const c of chains) {
    f.canonicalChains.add({
      url: c.chain[0],
      canonical: c.chain[1],
      chain: c.chain,
      hop_count: c.chain.length - 1,
      loop: c.loop,
    });
  }
}

/**
 * Follows each canonical chain to its end: the last URL's record is read while it is an
 * indexable 200 page naming yet another canonical, up to MAX_HOPS hops; a URL met twice closes a
 * loop (of any length). One batched read per hop for all chains of the page of records.
 */
async function followCanonicalChains(
  kv: Deno.Kv,
  auditId: string,
  chains: { chain: string[]; loop: boolean }[],
): Promise<void> {
  let open = chains.filter((c) => !c.loop);
  for (let hop = 2; hop < MAX_HOPS && open.length > 0; hop++) {
    const recs = await getPages(kv, auditId, open.map((c) => c.chain[c.chain.length - 1]));
    const next: typeof open = [];
    open.forEach((c, i) => {
      const r = recs[i];
      if (!r || r.state !== "fetched" || !r.html || !is2xx(r) || r.noindex) return;
      if (r.canonicalOther === null) return;
      if (c.chain.includes(r.canonicalOther)) c.loop = true;
      c.chain.push(r.canonicalOther);
      if (!c.loop) next.push(c);
    });
    open = next;
  }
}

/** Why a crawled hreflang alternate cannot stand in a cluster, or null when it can. */
function alternateProblem(t: PageRecord): string | null {
  if (t.state === "blocked") return "blocked by robots.txt";
  if (t.state === "failed") return "fetch failed";
  if (t.location !== null) return "redirects";
  if (!is2xx(t)) return "error status";
  if (!t.html) return "not an HTML page";
  if (t.noindex) return "noindex";
  if (t.canonicalOther !== null) return "canonicalised to another URL";
  return null;
}

/**
 * hreflang alternates of a page of records (internal ones the crawl reached; it follows them):
 * an alternate that redirects, fails, is blocked, noindex or canonicalised elsewhere
 * (hreflang_target_bad, one item per alternate); an alternate that is a good page must list the
 * page among its own alternates (hreflang_no_return). Alternates not crawled (the budget ran out)
 * are not judged.
 */
async function hreflangAlternates(
  kv: Deno.Kv,
  auditId: string,
  pages: PageRecord[],
  f: ReturnType<typeof emptyFacts>,
  markLater: Set<string>,
): Promise<void> {
  if (pages.length === 0) return;
  const urls = [...new Set(pages.flatMap((p) => p.hreflang ?? []))];
  const got = await getPages(kv, auditId, urls);
  const byUrl = new Map<string, PageRecord>();
  got.forEach((t, i) => {
    if (t && t.state !== "unvisited" && t.state !== "queued") byUrl.set(urls[i], t);
  });
  for (const p of pages) {
    let judged = false;
    let returnsJudged = false;
    let bad = false;
    const missing: string[] = [];
    for (const u of p.hreflang ?? []) {
      const t = byUrl.get(u);
      if (!t) continue;
      judged = true;
      const problem = alternateProblem(t);
      // A failing alternate is charged here, not again by the status checks.
      if (t.state === "failed" || t.status >= 300) markLater.add(t.url);
      if (problem !== null) {
        f.hreflangTargetBad.add(
          { url: p.url, alternate: u, target_status: t.status || null, reason: problem },
          !bad,
        );
        bad = true;
        continue;
      }
      returnsJudged = true;
      if (!(t.hreflang ?? []).includes(p.url)) missing.push(u);
    }
    if (judged) f.hreflangTargetPages++;
    if (!returnsJudged) continue;
    f.hreflangPages++;
    if (missing.length > 0) f.hreflangNoReturn.add({ url: p.url, no_return_from: missing });
  }
}

/** Where a URL's duplicates would be one page: its origin and path, lower-cased. */
function variantKey(url: string): { key: string; query: string } {
  const u = new URL(url);
  return { key: (u.origin + u.pathname).toLowerCase(), query: u.search };
}

/**
 * Groups of the duplicate index (contiguous by the text's digest; the text itself is in each
 * entry's value): every member of a group of 2+ is affected.
 * With `variants`, a group whose URLs are all one path up to letter case goes to `variants.case`,
 * and one whose URLs are one path with different query strings to `variants.param`: the same
 * page at several addresses, counted once, where it is fixed.
 */
async function duplicates(
  kv: Deno.Kv,
  auditId: string,
  kind: string,
  g: Group,
  show: (value: string) => Evidence,
  onGroup?: (value: string) => void,
  variants?: { case: Group; param: Group },
): Promise<void> {
  const KEEP = 50;
  let value: string | null = null;
  let members: string[] = [];
  let size = 0;
  // Whether every member so far shares the first one's variant key, and how they differ.
  let first: { key: string; query: string } | null = null;
  let oneKey = true;
  let queriesDiffer = false;
  const close = () => {
    if (value === null || size < 2) return;
    onGroup?.(value);
    const into = !variants || !oneKey ? g : queriesDiffer ? variants.param : variants.case;
    const differs: Evidence = into === g ? {} : { differs_in: queriesDiffer ? "query" : "case" };
    for (let i = 0; i < size; i++) {
      const url = i < members.length ? members[i] : null;
      if (url === null) {
        into.count++;
        continue;
      }
      into.add({
        url,
        ...show(value),
        ...differs,
        group_size: size,
        same_as: members.filter((m) => m !== url).slice(0, 5),
      });
    }
  };
  let digest: string | null = null;
  for await (const page of listInPages<DupEntry | number>(kv, keys.auditDups(auditId, kind))) {
    for (const e of page) {
      const d = e.key[3] as string;
      const url = e.key[4] as string;
      if (d !== digest) {
        close();
        digest = d;
        // The text is in the value (entries written before the digest held it in the key).
        value = typeof e.value === "object" && e.value !== null ? e.value.v : d;
        members = [];
        size = 0;
        first = null;
        oneKey = true;
        queriesDiffer = false;
      }
      size++;
      if (members.length < KEEP) members.push(url);
      if (variants && oneKey) {
        const k = variantKey(url);
        if (first === null) first = k;
        else if (k.key !== first.key) oneKey = false;
        else if (k.query !== first.query) queriesDiffer = true;
      }
    }
  }
  close();
}

/** A page's stored text signature (engine.ts `indexDuplicates`). */
interface NearSig {
  u: string;
  h: number;
  s: Uint16Array;
}

/**
 * Pages with a near-duplicate, from the LSH band index (engine.ts): entries sorted by band, so
 * each bucket of pages sharing a band is contiguous; every page is compared with the first
 * NEAR_MAX_COMPARE pages of its bucket (the only signatures held), skipping pairs of identical
 * text and pairs already both known. Signatures are read per page of the index, only for entries
 * that may share their bucket, and the last NEAR_SIG_CACHE read are kept. A page with an identical twin can make a third page a
 * near-duplicate but is not counted itself (duplicate_content counts it).
 */
async function nearDuplicates(
  kv: Deno.Kv,
  auditId: string,
  twins: ReadonlySet<number>,
  g: Group,
): Promise<void> {
  interface Entry {
    url: string;
    hash: number;
    text: number;
    sig: Uint16Array;
  }
  const near = new Set<number>();
  // A page sits in up to 16 buckets: recently read signatures are kept (bounded, oldest out).
  const cache = new Map<number, NearSig | null>();
  let bucket: string | null = null;
  let held: Entry[] = [];
  const found = (x: Entry, other: Entry, sim: number) => {
    if (near.has(x.hash)) return;
    near.add(x.hash);
    if (!twins.has(x.text)) {
      g.add({ url: x.url, similar_to: other.url, similarity: Math.round(sim * 100) / 100 });
    }
  };
  for await (const page of listInPages<number>(kv, keys.auditNearBands(auditId))) {
    const bands = page.map((e) => e.key[2] as string);
    // An entry alone in its bucket within this page (and not continuing the previous page's
    // bucket, nor possibly continued by the next page) is compared with nothing: no read.
    const needed = bands.map((b, i) =>
      b === bucket || (i > 0 && bands[i - 1] === b) ||
      (i + 1 < bands.length && bands[i + 1] === b) || i === bands.length - 1
    );
    const byHash = new Map<number, NearSig | null>();
    const want: number[] = [];
    for (let i = 0; i < page.length; i++) {
      const h = page[i].key[3] as number;
      if (!needed[i] || byHash.has(h)) continue;
      const c = cache.get(h);
      if (c !== undefined) byHash.set(h, c);
      else {
        byHash.set(h, null);
        want.push(h);
      }
    }
    const sigs = await getMany<NearSig>(kv, want.map((h) => keys.auditNearSig(auditId, h)));
    want.forEach((h, i) => {
      byHash.set(h, sigs[i]);
      if (cache.size >= NEAR_SIG_CACHE) cache.delete(cache.keys().next().value!);
      cache.set(h, sigs[i]);
    });
    for (let i = 0; i < page.length; i++) {
      if (bands[i] !== bucket) {
        bucket = bands[i];
        held = [];
      }
      const v = needed[i] ? byHash.get(page[i].key[3] as number) : null;
      if (!v) continue;
      const a: Entry = { url: v.u, hash: page[i].key[3] as number, text: v.h, sig: v.s };
      for (const o of held) {
        if (o.text === a.text || (near.has(a.hash) && near.has(o.hash))) continue;
        const sim = similarity(a.sig, o.sig);
        if (sim >= NEAR_SIMILARITY) {
          found(a, o, sim);
          found(o, a, sim);
        }
      }
      if (held.length < NEAR_MAX_COMPARE) held.push(a);
    }
  }
}
