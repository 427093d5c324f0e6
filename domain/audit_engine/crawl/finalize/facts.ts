/**
 * The site facts the passes fill in: `SiteFacts` with every item list a `Group` (a true count and
 * at most FINDINGS_CAP items), started from the crawl state's site-level facts.
 *
 * @example
 * ```ts
 * import type { CrawlState } from "../state.ts";
 * declare const state: CrawlState;
 * const f = emptyFacts(state);
 * f.status4xx.add({ url: "https://example.com/gone", status: 404 });
 * f.status4xx.count; // 1
 * ```
 *
 * @module
 */
import type { Evidence, ItemGroup, SiteFacts, UrlSummary } from "../../types.ts";
import { type CrawlState, linkGraphPartial } from "../state.ts";
import { BOT_TOKEN } from "../../robots.ts";
import { FINDINGS_CAP } from "../store.ts";

/** Affected items of one finding: every one counted, the first FINDINGS_CAP kept. */
export class Group implements ItemGroup {
  count = 0;
  items: Evidence[] = [];
  /**
   * `counts: false` keeps the item without counting it (several items of one counted page).
   * Answers whether the item was kept (the first FINDINGS_CAP are): only a kept item's URLs are
   * read back (url_names.ts).
   */
  add(item: Evidence, counts = true): boolean {
    if (counts) this.count++;
    if (this.items.length >= FINDINGS_CAP) return false;
    this.items.push(item);
    return true;
  }
}

/** `SiteFacts` as the passes build it: every item list a `Group`. */
export interface Facts extends SiteFacts {
  status4xx: Group;
  paid: Group;
  status5xx: Group;
  failed: Group;
  blocked: Group;
  sitemapBad: Group;
  canonicalBad: Group;
  canonicalChains: Group;
  sitemapMissing: Group;
  singleInlink: Group;
  xRobotsNonHtml: Group;
  hreflangNoReturn: Group;
  hreflangTargetBad: Group;
  brokenLinks: Group;
  brokenFragments: Group;
  brokenResources: Group;
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
}

/** Facts with nothing counted yet; the start URL stands for start and home until read. */
export function emptyFacts(state: CrawlState): Facts {
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
    botToken: state.botToken ?? BOT_TOKEN,
    sitemap: state.sitemap,
    httpProbe: state.httpProbe,
    truncated: linkGraphPartial(state),
    records: [],
    attempted: 0,
    status4xx: new Group(),
    paid: new Group(),
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
    fragmentPages: 0,
    brokenFragments: new Group(),
    resourcePages: 0,
    brokenResources: new Group(),
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
