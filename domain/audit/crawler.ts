/**
 * The site crawler: breadth-first from the start URL over internal links, robots.txt honoured
 * (our token, Crawl-delay), sitemap URLs crawled after the link graph, redirects never followed
 * automatically (each hop is a record, so chains and loops are measurable), bounded concurrency,
 * per-request timeouts and body caps through `safeFetch`. It keeps small per-URL records and
 * hands each HTML page to `onPage` once (the page checks run there), then forgets the page.
 *
 * @module
 */
import {
  FetchFailedError,
  type Resolver,
  safeFetch,
  type SafeResponse,
} from "../net/safe_fetch.ts";
import { checkUrlTarget, TargetRefusedError } from "../net/address_guard.ts";
import { extractPageFacts, type PageFacts, siteKeyOf } from "./page_facts.ts";
import { makeRobots, type Robots, USER_AGENT } from "./robots.ts";
import { parseSitemap, SITEMAP_MAX_BYTES, SITEMAP_MAX_URLS } from "./sitemap.ts";
import { canonicalize, canonicalUrl } from "./urls.ts";
import { isNofollowPage, isNoindex, resolveCanonicals } from "./checks/helpers.ts";
import { needsBanner } from "./js_libraries.ts";
import type { CrawlResult, PageContext, SitemapInfo, UrlRecord } from "./types.ts";

export interface CrawlOptions {
  startUrl: string;
  maxPages: number;
  concurrency: number;
  allowPrivate: boolean;
  timeoutMs: number;
  maxBytes: number;
  resolver?: Resolver;
  /** Epoch ms the audit runs at. */
  now: number;
  /** Stop starting new fetches after this many ms (the report is then partial). */
  deadlineMs: number;
  /** Extra CA (PEM) for private https test servers. */
  ca?: string;
  /** Called once per fetched HTML 2xx page. */
  onPage: (ctx: PageContext, record: UrlRecord) => void;
}

export interface CrawlOutput {
  result: CrawlResult;
  jobsCompleted: number;
  jobsFailed: number;
}

const MAX_CRAWL_DELAY_S = 10;
const MAX_REDIRECT_HOPS = 5;
const MAX_SITEMAP_FILES = 20;
const MAX_RETRY_AFTER_MS = 5_000;
const ACCEPT_HTML = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5";
/** Script files read for a library banner per audit, and how much of each. */
const MAX_BANNER_FETCHES = 20;
const BANNER_BYTES = 4096;
const EMPTY_LINKS = new Uint32Array(0);
const EMPTY_SIG = new Uint16Array(0);

function isHtmlType(ct: string | null): boolean {
  if (!ct) return false;
  const t = ct.toLowerCase();
  return t.includes("text/html") || t.includes("application/xhtml+xml");
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function newRecord(id: number, url: string, depth: number, inSitemap: boolean): UrlRecord {
  return {
    id,
    url,
    depth,
    state: "unvisited",
    status: 0,
    failure: null,
    location: -1,
    externalLocation: false,
    html: false,
    noindex: false,
    title: null,
    description: null,
    h1: null,
    textHash: 0,
    textSig: EMPTY_SIG,
    words: 0,
    canonicalOther: null,
    links: EMPTY_LINKS,
    inlinks: 0,
    inSitemap,
    ttfbMs: 0,
  };
}

function failureKind(e: unknown): string {
  if (e instanceof FetchFailedError) return e.kind;
  if (e instanceof TargetRefusedError) return e.reason === "dns_failure" ? "dns" : "refused";
  return "network";
}

/**
 * Crawls a site. Throws `TargetRefusedError` only when the start URL itself is refused by the
 * address guard for a policy reason (a DNS failure of the start host yields a crawl whose start
 * record failed instead).
 */
export async function crawlSite(opts: CrawlOptions): Promise<CrawlOutput> {
  const t0 = performance.now();
  const deadline = t0 + opts.deadlineMs;
  const checked = await checkUrlTarget(opts.startUrl, {
    allowPrivate: opts.allowPrivate,
    resolver: opts.resolver,
  }).catch((e) => {
    if (e instanceof TargetRefusedError && e.reason !== "dns_failure") throw e;
    return null;
  });
  const startParsed = checked?.url ?? new URL(opts.startUrl);
  const startUrl = canonicalUrl(startParsed);
  const siteKey = siteKeyOf(startParsed);
  const fetchOpts = {
    allowPrivate: opts.allowPrivate,
    timeoutMs: opts.timeoutMs,
    maxBytes: opts.maxBytes,
    resolver: opts.resolver,
    ca: opts.ca,
    headers: { "user-agent": USER_AGENT, accept: ACCEPT_HTML },
  };

  /** Follows redirects by hand (each hop re-checked by the guard); for robots, sitemaps, probes. */
  async function fetchFollow(
    url: string,
    readBody: boolean,
    timeoutMs = opts.timeoutMs,
  ): Promise<{ res: SafeResponse | null; error: unknown }> {
    let cur = url;
    for (let hop = 0; hop <= MAX_REDIRECT_HOPS; hop++) {
      let res: SafeResponse;
      try {
        res = await safeFetch(cur, {
          ...fetchOpts,
          timeoutMs,
          maxBytes: Math.max(opts.maxBytes, readBody ? SITEMAP_MAX_BYTES : 0),
          shouldReadBody: (st) => readBody && st >= 200 && st < 300,
        });
      } catch (e) {
        return { res: null, error: e };
      }
      const loc = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && loc) {
        const next = canonicalize(loc, cur);
        if (next === null) return { res, error: null };
        cur = next;
        continue;
      }
      return { res, error: null };
    }
    return { res: null, error: new Error("too many redirects") };
  }

  // robots.txt, per origin, fetched once.
  const robotsCache = new Map<string, Promise<Robots>>();
  function robotsFor(origin: string): Promise<Robots> {
    let p = robotsCache.get(origin);
    if (!p) {
      const robotsUrl = `${origin}/robots.txt`;
      p = fetchFollow(robotsUrl, true).then(({ res }) => {
        if (!res || res.status >= 500 || res.status === 429) {
          return makeRobots(robotsUrl, "unreachable", res?.status ?? 0, "");
        }
        if (res.status >= 400 || res.status < 200 || res.status >= 300) {
          return makeRobots(robotsUrl, "missing", res.status, "");
        }
        return makeRobots(robotsUrl, "ok", res.status, new TextDecoder().decode(res.body));
      });
      robotsCache.set(origin, p);
    }
    return p;
  }

  const robots = checked ? await robotsFor(startParsed.origin) : makeRobots(
    `${startParsed.origin}/robots.txt`,
    "unreachable",
    0,
    "",
  );
  const ownBotBlocked = !robots.isAllowed(startUrl);
  const crawlDelayMs = Math.min(robots.crawlDelay, MAX_CRAWL_DELAY_S) * 1000;

  // Sitemaps and the http->https probe run before the crawl; both are small.
  const sitemapSet = new Set<string>();
  const sitemap: SitemapInfo = checked
    ? await readSitemaps()
    : { found: false, problems: [], urlCount: 0 };
  let httpProbe: CrawlResult["httpProbe"] = "not_applicable";
  if (checked && startParsed.protocol === "https:") {
    const { res } = await fetchFollow(
      `http://${startParsed.hostname}/`,
      false,
      Math.min(opts.timeoutMs, 5_000),
    );
    if (!res) httpProbe = "unreachable";
    else if (res.url.startsWith("https:")) httpProbe = "redirects_to_https";
    else if (res.status >= 200 && res.status < 400) httpProbe = "serves_http";
    else httpProbe = "unreachable";
  }

  async function readSitemaps(): Promise<SitemapInfo> {
    const info: SitemapInfo = { found: false, problems: [], urlCount: 0 };
    const declared = robots.sitemaps.length > 0;
    const queue = declared ? [...robots.sitemaps] : [`${startParsed.origin}/sitemap.xml`];
    const seen = new Set<string>();
    while (queue.length > 0 && seen.size < MAX_SITEMAP_FILES) {
      const url = queue.shift()!;
      if (seen.has(url)) continue;
      seen.add(url);
      const parsedUrl = canonicalize(url);
      if (parsedUrl === null) {
        info.problems.push(`sitemap URL ${url} is not absolute`);
        continue;
      }
      if (!robots.isAllowed(parsedUrl, "Googlebot")) {
        info.problems.push(`sitemap ${url} is blocked by robots.txt`);
        continue;
      }
      const { res } = await fetchFollow(parsedUrl, true);
      if (!res || res.status !== 200) {
        if (declared) info.problems.push(`sitemap ${url} answers ${res?.status ?? "no response"}`);
        continue;
      }
      let body = res.body;
      if (body[0] === 0x1f && body[1] === 0x8b) {
        try {
          body = new Uint8Array(
            await new Response(
              new Blob([body as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
                new DecompressionStream("gzip"),
              ),
            ).arrayBuffer(),
          );
        } catch {
          info.problems.push(`sitemap ${url} is not valid gzip`);
          continue;
        }
      }
      if (res.truncated || body.byteLength > SITEMAP_MAX_BYTES) {
        info.problems.push(`sitemap ${url} is larger than 50 MB`);
      }
      const sm = parseSitemap(new TextDecoder().decode(body));
      if (sm.root !== "urlset" && sm.root !== "sitemapindex") {
        info.problems.push(`sitemap ${url} root is <${sm.root ?? "nothing"}>`);
        continue;
      }
      info.found = true;
      if (sm.errors.length > 0) info.problems.push(`sitemap ${url} is not well-formed XML`);
      if (sm.totalEntries > SITEMAP_MAX_URLS) {
        info.problems.push(`sitemap ${url} lists more than 50,000 entries`);
      }
      let offsite = 0;
      for (const loc of sm.urls) {
        const c = /^https?:\/\//i.test(loc) ? canonicalize(loc) : null;
        if (c === null || siteKeyOf(new URL(c)) !== siteKey) {
          offsite++;
          continue;
        }
        if (sitemapSet.size < SITEMAP_MAX_URLS) sitemapSet.add(c);
      }
      if (offsite > 0) {
        info.problems.push(`sitemap ${url} has ${offsite} relative or off-site <loc>`);
      }
      for (const child of sm.sitemaps) queue.push(child);
    }
    info.urlCount = sitemapSet.size;
    return info;
  }

  // The crawl proper.
  const records: UrlRecord[] = [];
  const byUrl = new Map<string, UrlRecord>();
  const queue: UrlRecord[] = [];
  let head = 0;
  const htmlTtfbs: number[] = [];
  let fetches = 0;
  let jobsCompleted = 0;
  let jobsFailed = 0;
  let nextSlot = 0;

  function getOrCreate(url: string, depth: number): UrlRecord {
    let r = byUrl.get(url);
    if (!r) {
      r = newRecord(records.length, url, depth, sitemapSet.has(url));
      records.push(r);
      byUrl.set(url, r);
    }
    return r;
  }

  function enqueue(r: UrlRecord) {
    if (r.state !== "unvisited") return;
    r.state = "queued";
    queue.push(r);
  }

  // Heads of versionless library scripts (vulnerable_js_library reads their banners), fetched
  // once per URL and at most MAX_BANNER_FETCHES per audit, robots.txt honoured; a failure just
  // means "unknown".
  const banners = new Map<string, Promise<string | null>>();
  function bannerOf(url: string): Promise<string | null> {
    let p = banners.get(url);
    if (!p) {
      if (banners.size >= MAX_BANNER_FETCHES) return Promise.resolve(null);
      const origin = new URL(url).origin;
      p = robotsFor(origin).then((r) =>
        r.isAllowed(url)
          ? safeFetch(url, {
            ...fetchOpts,
            headers: { "user-agent": USER_AGENT, accept: "*/*" },
            timeoutMs: Math.min(opts.timeoutMs, 5_000),
            maxBytes: BANNER_BYTES,
            shouldReadBody: (st) => st >= 200 && st < 300,
          }).then((res) =>
            res.status >= 200 && res.status < 300 ? new TextDecoder().decode(res.body) : null
          )
          : null
      ).catch(() => null);
      banners.set(url, p);
    }
    return p;
  }

  async function scriptHeadsOf(facts: PageFacts): Promise<Map<string, string> | undefined> {
    let out: Map<string, string> | undefined;
    for (const src of facts.libraryScripts) {
      if (!needsBanner(src)) continue;
      const head = await bannerOf(src);
      if (head !== null) (out ??= new Map()).set(src, head);
    }
    return out;
  }

  async function politeness() {
    if (crawlDelayMs === 0) return;
    const now = performance.now();
    const wait = nextSlot - now;
    nextSlot = Math.max(now, nextSlot) + crawlDelayMs;
    if (wait > 0) await sleep(wait);
  }

  async function fetchPage(rec: UrlRecord): Promise<SafeResponse> {
    const read = (st: number, h: Headers) =>
      st >= 200 && st < 300 && isHtmlType(h.get("content-type"));
    let res = await safeFetch(rec.url, { ...fetchOpts, shouldReadBody: read });
    if (res.status === 429 || res.status === 503) {
      // Back off once when the server says how long; a bot wall stays a failed page.
      const ra = Number(res.headers.get("retry-after"));
      if (Number.isFinite(ra) && ra >= 0 && ra * 1000 <= MAX_RETRY_AFTER_MS) {
        await sleep(ra * 1000);
        res = await safeFetch(rec.url, { ...fetchOpts, shouldReadBody: read });
      }
    }
    return res;
  }

  async function process(rec: UrlRecord): Promise<void> {
    const u = new URL(rec.url);
    const r = u.origin === startParsed.origin ? robots : await robotsFor(u.origin);
    if (!r.isAllowed(rec.url)) {
      rec.state = "blocked";
      fetches--; // blocked URLs are not fetched and do not use the page budget
      return;
    }
    await politeness();
    let res: SafeResponse;
    try {
      res = await fetchPage(rec);
    } catch (e) {
      rec.state = "failed";
      rec.failure = failureKind(e);
      jobsFailed++;
      return;
    }
    jobsCompleted++;
    rec.state = "fetched";
    rec.status = res.status;
    rec.ttfbMs = res.ttfbMs;
    const loc = res.headers.get("location");
    if (res.status >= 300 && res.status < 400) {
      const target = loc ? canonicalize(loc, rec.url) : null;
      if (target !== null) {
        if (siteKeyOf(new URL(target)) === siteKey) {
          const t = getOrCreate(target, rec.depth);
          rec.location = t.id;
          enqueue(t);
        } else rec.externalLocation = true;
      }
      return;
    }
    if (res.status < 200 || res.status >= 300 || !isHtmlType(res.headers.get("content-type"))) {
      return;
    }
    rec.html = true;
    htmlTtfbs.push(res.ttfbMs);
    const facts = extractPageFacts(res.body, u, siteKey);
    const noindex = isNoindex(facts, res.headers, opts.now);
    rec.noindex = noindex;
    const ctx: PageContext = {
      url: u,
      status: res.status,
      headers: res.headers,
      facts,
      depth: rec.depth,
      isHome: rec.depth === 0,
      indexable: !noindex,
      now: opts.now,
      scriptHeads: facts.libraryScripts.length > 0 ? await scriptHeadsOf(facts) : undefined,
    };
    rec.title = facts.title;
    rec.description = facts.description;
    rec.h1 = facts.h1;
    rec.textHash = facts.textHash;
    // Only pages that can be duplicates keep a signature (128 bytes each).
    if (facts.wordCount >= 20) rec.textSig = facts.textSig;
    rec.words = facts.wordCount;
    const canon = resolveCanonicals(ctx);
    if (canon.length === 1 && canon[0] !== null) {
      const c = canonicalUrl(canon[0]);
      if (c !== rec.url) rec.canonicalOther = c;
    }
    linkPage(rec, facts, !isNofollowPage(facts.robotsMeta, res.headers));
    opts.onPage(ctx, rec);
  }

  function linkPage(rec: UrlRecord, facts: PageFacts, follow: boolean) {
    const ids: number[] = [];
    const childDepth = rec.depth < 0 ? -1 : rec.depth + 1;
    for (const l of facts.links) {
      const t = getOrCreate(l, childDepth);
      if (t.id !== rec.id) {
        ids.push(t.id);
        t.inlinks++;
      }
      if (follow) enqueue(t);
    }
    for (const l of facts.nofollowLinks) {
      const t = getOrCreate(l, childDepth);
      if (t.id !== rec.id) ids.push(t.id);
    }
    rec.links = Uint32Array.from(ids);
    // Canonical and meta-refresh targets are crawled too, so their status can be judged.
    const extra: string[] = [];
    if (rec.canonicalOther) extra.push(rec.canonicalOther);
    if (facts.metaRefresh?.url) extra.push(facts.metaRefresh.url);
    for (const e of extra) {
      if (siteKeyOf(new URL(e)) === siteKey) enqueue(getOrCreate(e, childDepth));
    }
  }

  const start = getOrCreate(startUrl, 0);
  if (!checked) {
    start.state = "failed";
    start.failure = "dns";
    jobsFailed++;
  } else if (ownBotBlocked) {
    start.state = "blocked";
  } else {
    enqueue(start);
  }

  let sitemapSeeded = !checked || ownBotBlocked;
  const budget = Math.max(1, opts.maxPages);
  const concurrency = Math.max(1, Math.min(opts.concurrency, 32));
  let truncated = false;
  await new Promise<void>((resolve) => {
    let active = 0;
    const pump = () => {
      while (active < concurrency && head < queue.length) {
        if (fetches >= budget || performance.now() > deadline) {
          truncated = true;
          break;
        }
        const rec = queue[head++];
        fetches++;
        active++;
        process(rec).catch(() => {
          rec.state = "failed";
          rec.failure = rec.failure ?? "internal";
        }).finally(() => {
          active--;
          pump();
        });
      }
      if (active > 0) return;
      const canFetch = fetches < budget && performance.now() <= deadline;
      if (!sitemapSeeded && canFetch) {
        // Sitemap URLs the links never reached: crawl them after the link graph (orphans).
        sitemapSeeded = true;
        for (const url of sitemapSet) {
          const r = getOrCreate(url, -1);
          enqueue(r);
        }
        if (head < queue.length) return pump();
      }
      if (head < queue.length) truncated = true;
      resolve();
    };
    pump();
  });

  const home = followToEnd(records, start);
  return {
    result: {
      startUrl,
      siteKey,
      start,
      home,
      records,
      byUrl,
      robots,
      ownBotBlocked,
      sitemap,
      httpProbe,
      htmlTtfbs,
      truncated,
    },
    jobsCompleted,
    jobsFailed,
  };
}

function followToEnd(records: UrlRecord[], r: UrlRecord): UrlRecord | null {
  let cur = r;
  for (let i = 0; i <= 10; i++) {
    if (cur.location < 0) return cur;
    cur = records[cur.location];
  }
  return null;
}
