/**
 * robots.txt per origin for a stepped crawl: fetched once per audit and origin, its body stored
 * in KV (chunked), and parsed again from there by any later step, on any process.
 *
 * @module
 */
import type { RobotsMeta } from "../types.ts";
import { DEFAULT_ROBOTS_CAPS, makeRobots, type Robots, type RobotsCaps } from "../robots.ts";
import { fetchFollow, type FetchSettings } from "./fetcher.ts";
import { readBlob, type WriteBatch, writeBlob } from "./store.ts";

export type { RobotsMeta };

/** How far past its byte cap robots.txt is read: only far enough to say it is too large. */
const READ_PAST_CAP = 16 * 1024;

const blobName = (origin: string) => `robots ${origin}`;

/** Fetches an origin's robots.txt; the caller stores `meta` and the returned body. */
export async function fetchRobots(
  s: FetchSettings,
  origin: string,
  maxBytes: number = DEFAULT_ROBOTS_CAPS.maxBytes,
): Promise<{ meta: RobotsMeta; body: string }> {
  const url = `${origin}/robots.txt`;
  const { res } = await fetchFollow(s, url, { readBody: true, maxBytes: maxBytes + READ_PAST_CAP });
  if (!res || res.status >= 500 || res.status === 429) {
    return { meta: { state: "unreachable", status: res?.status ?? 0, url }, body: "" };
  }
  if (res.status < 200 || res.status >= 300) {
    return { meta: { state: "missing", status: res.status, url }, body: "" };
  }
  return {
    meta: { state: "ok", status: res.status, url },
    body: new TextDecoder().decode(res.body),
  };
}

/**
 * An origin's robots.txt as the crawl stored it (`meta` from the crawl state, the text from KV),
 * parsed, with its text ("" for one the crawl did not read as ok).
 */
export async function storedRobots(
  kv: Deno.Kv,
  auditId: string,
  origin: string,
  meta: RobotsMeta,
  caps: RobotsCaps,
  token: string | undefined,
): Promise<{ robots: Robots; text: string }> {
  const text = meta.state === "ok" ? await readBlob(kv, auditId, blobName(origin)) : "";
  return { robots: makeRobots(meta.url, meta.state, meta.status, text, caps, token), text };
}

/**
 * The robots.txt of the origins a step meets: from memory, else from KV, else fetched (and then
 * recorded in `known` and the batch, so the state commit makes it part of the crawl).
 */
export class RobotsSource {
  private readonly cache = new Map<string, Promise<Robots>>();

  constructor(
    private readonly kv: Deno.Kv,
    private readonly auditId: string,
    private readonly settings: FetchSettings,
    readonly known: Record<string, RobotsMeta>,
    private readonly batch: WriteBatch,
    private readonly caps: RobotsCaps = DEFAULT_ROBOTS_CAPS,
    /** Called with each file fetched (not re-read from KV): its cap report is the crawl's. */
    private readonly onFetched?: (robots: Robots) => void,
  ) {}

  /** Robots of an origin; a failure to fetch reads as allow-all ("unreachable"). */
  for(origin: string): Promise<Robots> {
    let p = this.cache.get(origin);
    if (!p) {
      p = this.load(origin);
      this.cache.set(origin, p);
    }
    return p;
  }

  private async load(origin: string): Promise<Robots> {
    const meta = this.known[origin];
    if (meta) {
      const { kv, auditId, caps, settings } = this;
      return (await storedRobots(kv, auditId, origin, meta, caps, settings.robotsToken)).robots;
    }
    const fetched = await fetchRobots(this.settings, origin, this.caps.maxBytes);
    this.record(origin, fetched.meta, fetched.body);
    const robots = makeRobots(
      fetched.meta.url,
      fetched.meta.state,
      fetched.meta.status,
      fetched.body,
      this.caps,
      this.settings.robotsToken,
    );
    this.onFetched?.(robots);
    return robots;
  }

  /**
   * Takes an origin's robots.txt as parsed elsewhere (the init step, whose writes may not be in
   * KV yet, when the crawl goes on in the same step).
   */
  prime(origin: string, robots: Robots): void {
    this.cache.set(origin, Promise.resolve(robots));
  }

  /** Records an origin's robots.txt fetched elsewhere (the init step). */
  record(origin: string, meta: RobotsMeta, body: string): void {
    this.known[origin] = meta;
    if (meta.state === "ok") writeBlob(this.batch, this.auditId, blobName(origin), body);
  }
}
