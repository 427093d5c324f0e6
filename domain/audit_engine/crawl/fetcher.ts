/**
 * The crawl's HTTP side: one configured `safeFetch` for pages (no redirect followed: each hop is
 * a record) and one that follows redirects by hand for robots.txt, sitemaps and the http probe,
 * each hop re-checked by the address guard. Staging credentials (`auth`) are added per request,
 * only to the start URL's origin, so a hop that leaves it goes without them. Waiting between
 * requests (rate, Crawl-delay, Retry-After) is politeness.ts'; nothing here sleeps.
 *
 * @module
 */
import {
  type ConnectionPool,
  FetchFailedError,
  type Resolver,
  safeFetch,
  type SafeResponse,
  TargetRefusedError,
} from "../../net/mod.ts";
import { USER_AGENT } from "../robots.ts";
import { crawlerIdentity } from "../user_agents.ts";
import { sameOrigin, siteAuthHeaders } from "../site_auth.ts";
import { canonicalize } from "../urls.ts";
import { BudgetSpentError, type ByteBudget } from "./byte_budget.ts";
import { throttleOf } from "./politeness.ts";
import type { CrawlInput } from "./state.ts";

export interface FetchSettings {
  allowPrivate: boolean;
  /** Per-request timeout, ms. */
  timeoutMs: number;
  /** Per-response body cap, bytes. */
  maxBytes: number;
  resolver?: Resolver;
  /** Extra CA (PEM) for private https test servers. */
  ca?: string;
  /** The crawl's byte budget: every fetch reserves from it and is capped at its reservation. */
  budget?: ByteBudget;
  /** The User-Agent of every request (the audit's `user_agent` preset); default ours. */
  userAgent?: string;
  /** The product token robots.txt is read for (the same preset's); default ours. */
  robotsToken?: string;
  /** Staging credentials as request headers, sent to `origin` only (never logged or stored). */
  auth?: { origin: string; headers: Record<string, string> };
  /** Kept-alive connections (a crawl step's, closed with it); without it each request is one-shot. */
  pool?: ConnectionPool;
}

/** The fetch settings of a crawl input; `budget` is the step's byte budget. */
export function settingsOf(input: CrawlInput, budget?: ByteBudget): FetchSettings {
  const identity = crawlerIdentity(input.userAgent);
  return {
    userAgent: identity.userAgent,
    robotsToken: identity.robotsToken,
    allowPrivate: input.allowPrivate,
    timeoutMs: input.timeoutMs ?? 10_000,
    maxBytes: input.maxBytes ?? 5 * 1024 * 1024,
    resolver: input.resolver,
    ca: input.ca,
    budget,
    auth: input.auth
      ? { origin: new URL(input.startUrl).origin, headers: siteAuthHeaders(input.auth) }
      : undefined,
  };
}

/**
 * Runs one fetch inside the byte budget: reserved before, capped at the reservation, settled
 * with what was read. Throws `BudgetSpentError` when nothing is left, and, with `whole`, when
 * the budget (not the per-fetch cap) cut the body: a page cut short by our budget would be judged
 * for what it lacks (no title, no links), so it counts as not fetched.
 */
async function budgeted(
  s: FetchSettings,
  maxBytes: number,
  run: (cap: number) => Promise<SafeResponse>,
  whole = false,
): Promise<SafeResponse> {
  const budget = s.budget;
  if (!budget) return await run(maxBytes);
  const cap = await budget.reserve(maxBytes);
  if (cap === null) throw new BudgetSpentError();
  let read = 0;
  try {
    const res = await run(cap);
    read = res.body.byteLength;
    if (whole && res.truncated && cap < maxBytes) throw new BudgetSpentError();
    return res;
  } finally {
    budget.settle(cap, read);
  }
}

const MAX_REDIRECT_HOPS = 5;
const ACCEPT_HTML = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5";
/**
 * How much of a script file is read for a library (its banner, or a version string in its code:
 * a minified jQuery carries `jquery:"…"` within its first few KB), and how long it may take.
 */
export const BANNER_BYTES = 64 * 1024;
const BANNER_TIMEOUT_MS = 5_000;

export function isHtmlType(ct: string | null): boolean {
  if (!ct) return false;
  const t = ct.toLowerCase();
  return t.includes("text/html") || t.includes("application/xhtml+xml");
}

/** The failure kind recorded for a URL that got no HTTP answer. */
export function failureKind(e: unknown): string {
  if (e instanceof FetchFailedError) return e.kind;
  if (e instanceof BudgetSpentError) return "budget";
  if (e instanceof TargetRefusedError) return e.reason === "dns_failure" ? "dns" : "refused";
  return "network";
}

/**
 * The safeFetch options of a request to `url`: our identity, what we accept and, on the start
 * URL's origin only, the staging credentials. Called per request (each redirect hop too), so
 * credentials never follow a hop to another origin.
 */
function baseOptions(s: FetchSettings, url: string, accept = ACCEPT_HTML) {
  const headers: Record<string, string> = { "user-agent": s.userAgent ?? USER_AGENT, accept };
  if (s.auth && sameOrigin(url, s.auth.origin)) Object.assign(headers, s.auth.headers);
  return {
    allowPrivate: s.allowPrivate,
    timeoutMs: s.timeoutMs,
    maxBytes: s.maxBytes,
    resolver: s.resolver,
    ca: s.ca,
    pool: s.pool,
    headers,
  };
}

/**
 * Follows redirects by hand (each hop re-checked by the guard). `maxBytes` caps the body read;
 * `readBody` false reads headers only.
 */
export async function fetchFollow(
  s: FetchSettings,
  url: string,
  opts: { readBody: boolean; maxBytes?: number; timeoutMs?: number },
): Promise<{ res: SafeResponse | null; error: unknown }> {
  let cur = url;
  for (let hop = 0; hop <= MAX_REDIRECT_HOPS; hop++) {
    let res: SafeResponse;
    try {
      res = await budgeted(s, opts.maxBytes ?? s.maxBytes, (cap) =>
        safeFetch(cur, {
          ...baseOptions(s, cur),
          timeoutMs: opts.timeoutMs ?? s.timeoutMs,
          maxBytes: cap,
          shouldReadBody: (st) => opts.readBody && st >= 200 && st < 300,
        }));
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

/**
 * Fetches one page without following redirects; reads the body only for HTML 2xx. A 429/503 is
 * returned as is: the fetch pool decides whether to slow down and queue the URL again.
 * `conditional`: an incremental crawl's `If-None-Match` / `If-Modified-Since` (crawl/reuse.ts).
 */
export function fetchPage(
  s: FetchSettings,
  url: string,
  conditional?: Record<string, string>,
): Promise<SafeResponse> {
  const read = (st: number, h: Headers) =>
    st >= 200 && st < 300 && isHtmlType(h.get("content-type"));
  return budgeted(
    s,
    s.maxBytes,
    (cap) => {
      const o = baseOptions(s, url);
      if (conditional) Object.assign(o.headers, conditional);
      return safeFetch(url, { ...o, maxBytes: cap, shouldReadBody: read });
    },
    true,
  );
}

/** Most an llms.txt-like text file may hold before it is refused as too large. */
const TEXT_MAX_BYTES = 1024 * 1024;

/**
 * A small text resource (`/llms.txt`): like `fetchPage`, but the body of any 2xx is read, whatever
 * its type (fetchPage reads HTML only), up to 1 MiB.
 */
export function fetchText(s: FetchSettings, url: string): Promise<SafeResponse> {
  return budgeted(s, Math.min(s.maxBytes, TEXT_MAX_BYTES), (cap) =>
    safeFetch(url, {
      ...baseOptions(s, url, "text/plain, text/markdown, */*;q=0.5"),
      maxBytes: cap,
      shouldReadBody: (status) => status >= 200 && status < 300,
    }), true);
}

/**
 * The first bytes of a script file (a library banner such as "jQuery v3.4.1"), through the
 * address guard, redirects not followed, at most 5 s; null when it cannot be read (the library
 * then stays "version unknown").
 */
export async function fetchBanner(s: FetchSettings, url: string): Promise<string | null> {
  try {
    const res = await budgeted(s, BANNER_BYTES, (cap) =>
      safeFetch(url, {
        ...baseOptions(s, url, "*/*"),
        timeoutMs: Math.min(s.timeoutMs, BANNER_TIMEOUT_MS),
        maxBytes: cap,
        shouldReadBody: (st) => st >= 200 && st < 300,
      }));
    return res.status >= 200 && res.status < 300 ? new TextDecoder().decode(res.body) : null;
  } catch {
    return null;
  }
}

/** Bytes a resource check reserves from the byte budget for one response's headers. */
const RESOURCE_HEADER_BYTES = 16 * 1024;

/** What a resource check got: the final status after redirects, and how it was asked. */
export interface ResourceAnswer {
  status: number;
  method: "HEAD" | "GET";
  /** A 429 (or 503 with Retry-After): how long the host asks us to wait, ms; else null. */
  throttleMs: number | null;
  /** The host that answered (the last hop's). */
  host: string;
}

/** An estimate of the bytes a response's status line and headers took on the wire. */
function headerBytes(h: Headers): number {
  let n = 17; // "HTTP/1.1 200 OK\r\n" and the blank line
  for (const [k, v] of h) n += k.length + v.length + 4;
  return n;
}

/**
 * The status of a same-site resource (broken_resources): HEAD, and GET when HEAD answers 405 or
 * 501 or fails (the body is never read: headers only); redirects followed by hand, each hop
 * through the address guard, at most MAX_REDIRECT_HOPS; a 429/503 is not retried here (it comes
 * back with `throttleMs`, and the caller slows the host down). Every request reserves RESOURCE_HEADER_BYTES from the byte budget
 * and is charged the size of its headers. Throws `BudgetSpentError`, `TargetRefusedError`, and
 * `FetchFailedError` (or a network error) when even the GET got no answer.
 */
export async function fetchResourceStatus(s: FetchSettings, url: string): Promise<ResourceAnswer> {
  const once = async (u: string, method: "HEAD" | "GET"): Promise<SafeResponse> => {
    const budget = s.budget;
    const cap = budget ? await budget.reserve(RESOURCE_HEADER_BYTES) : RESOURCE_HEADER_BYTES;
    if (cap === null) throw new BudgetSpentError();
    let read = 0;
    try {
      const res = await safeFetch(u, {
        ...baseOptions(s, u, "*/*"),
        method,
        maxBytes: cap,
        shouldReadBody: () => false,
      });
      read = Math.min(cap, headerBytes(res.headers));
      return res;
    } finally {
      budget?.settle(cap, read);
    }
  };
  const ask = async (u: string): Promise<{ res: SafeResponse; method: "HEAD" | "GET" }> => {
    try {
      const head = await once(u, "HEAD");
      if (head.status !== 405 && head.status !== 501) return { res: head, method: "HEAD" };
    } catch (e) {
      if (e instanceof BudgetSpentError || e instanceof TargetRefusedError) throw e;
    }
    return { res: await once(u, "GET"), method: "GET" };
  };
  let cur = url;
  for (let hop = 0; hop <= MAX_REDIRECT_HOPS; hop++) {
    const a = await ask(cur);
    const { status } = a.res;
    const answer = () => ({
      status,
      method: a.method,
      throttleMs: throttleOf(status, a.res.headers, Date.now()),
      host: new URL(cur).host,
    });
    const loc = a.res.headers.get("location");
    if (status >= 300 && status < 400 && loc) {
      let next: URL;
      try {
        next = new URL(loc, cur);
      } catch {
        return answer();
      }
      next.hash = "";
      cur = next.href;
      continue;
    }
    return answer();
  }
  throw new FetchFailedError("network", `More than ${MAX_REDIRECT_HOPS} redirects`, url);
}
