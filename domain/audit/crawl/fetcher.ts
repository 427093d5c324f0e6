/**
 * The crawl's HTTP side: one configured `safeFetch` for pages (no redirect followed: each hop is
 * a record) and one that follows redirects by hand for robots.txt, sitemaps and the http probe,
 * each hop re-checked by the address guard. Politeness (Crawl-delay) and a single back-off on a
 * short Retry-After live here too.
 *
 * @module
 */
import {
  FetchFailedError,
  type Resolver,
  safeFetch,
  type SafeResponse,
} from "../../net/safe_fetch.ts";
import { TargetRefusedError } from "../../net/address_guard.ts";
import { USER_AGENT } from "../robots.ts";
import { crawlerIdentity } from "../user_agents.ts";
import { canonicalize } from "../urls.ts";
import { BudgetSpentError, type ByteBudget } from "./byte_budget.ts";
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
const MAX_RETRY_AFTER_MS = 5_000;
const ACCEPT_HTML = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5";
/** How much of a script file is read for its library banner, and how long it may take. */
const BANNER_BYTES = 4096;
const BANNER_TIMEOUT_MS = 5_000;

export function isHtmlType(ct: string | null): boolean {
  if (!ct) return false;
  const t = ct.toLowerCase();
  return t.includes("text/html") || t.includes("application/xhtml+xml");
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The failure kind recorded for a URL that got no HTTP answer. */
export function failureKind(e: unknown): string {
  if (e instanceof FetchFailedError) return e.kind;
  if (e instanceof BudgetSpentError) return "budget";
  if (e instanceof TargetRefusedError) return e.reason === "dns_failure" ? "dns" : "refused";
  return "network";
}

function baseOptions(s: FetchSettings) {
  return {
    allowPrivate: s.allowPrivate,
    timeoutMs: s.timeoutMs,
    maxBytes: s.maxBytes,
    resolver: s.resolver,
    ca: s.ca,
    headers: { "user-agent": s.userAgent ?? USER_AGENT, accept: ACCEPT_HTML },
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
          ...baseOptions(s),
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

/** Fetches one page without following redirects; reads the body only for HTML 2xx. */
export async function fetchPage(s: FetchSettings, url: string): Promise<SafeResponse> {
  const read = (st: number, h: Headers) =>
    st >= 200 && st < 300 && isHtmlType(h.get("content-type"));
  const once = () =>
    budgeted(
      s,
      s.maxBytes,
      (cap) => safeFetch(url, { ...baseOptions(s), maxBytes: cap, shouldReadBody: read }),
      true,
    );
  let res = await once();
  if (res.status === 429 || res.status === 503) {
    // Back off once when the server says how long; a bot wall stays a failed page.
    const ra = Number(res.headers.get("retry-after"));
    if (Number.isFinite(ra) && ra >= 0 && ra * 1000 <= MAX_RETRY_AFTER_MS) {
      await sleep(ra * 1000);
      res = await once();
    }
  }
  return res;
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
      ...baseOptions(s),
      headers: {
        "user-agent": s.userAgent ?? USER_AGENT,
        accept: "text/plain, text/markdown, */*;q=0.5",
      },
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
        ...baseOptions(s),
        headers: { "user-agent": s.userAgent ?? USER_AGENT, accept: "*/*" },
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
 * through the address guard, at most MAX_REDIRECT_HOPS; one back-off on a 429/503 with a short
 * Retry-After, as for pages. Every request reserves RESOURCE_HEADER_BYTES from the byte budget
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
        ...baseOptions(s),
        method,
        headers: { "user-agent": s.userAgent ?? USER_AGENT, accept: "*/*" },
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
    let a = await ask(cur);
    if (a.res.status === 429 || a.res.status === 503) {
      // Back off once when the server says how long, as for pages.
      const ra = Number(a.res.headers.get("retry-after"));
      if (Number.isFinite(ra) && ra >= 0 && ra * 1000 <= MAX_RETRY_AFTER_MS) {
        await sleep(ra * 1000);
        a = await ask(cur);
      }
    }
    const { status } = a.res;
    const loc = a.res.headers.get("location");
    if (status >= 300 && status < 400 && loc) {
      let next: URL;
      try {
        next = new URL(loc, cur);
      } catch {
        return { status, method: a.method };
      }
      next.hash = "";
      cur = next.href;
      continue;
    }
    return { status, method: a.method };
  }
  throw new FetchFailedError("network", `More than ${MAX_REDIRECT_HOPS} redirects`, url);
}

/** Spaces request starts `delayMs` apart (robots.txt Crawl-delay); free when the delay is 0. */
export class Politeness {
  private nextSlot: number;
  constructor(private readonly delayMs: number, startAt: number) {
    this.nextSlot = startAt;
  }

  async wait(): Promise<void> {
    if (this.delayMs === 0) return;
    const now = Date.now();
    const wait = this.nextSlot - now;
    this.nextSlot = Math.max(now, this.nextSlot) + this.delayMs;
    if (wait > 0) await sleep(wait);
  }

  /** When the next request may start (carried over to the next step). */
  get next(): number {
    return this.nextSlot;
  }
}
