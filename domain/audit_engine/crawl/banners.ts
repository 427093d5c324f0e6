/**
 * Library heads for `vulnerable_js_library`: the first bytes of external scripts whose URL names
 * a known library, with or without a version (".../jquery.min.js", ".../jquery-1.8.3.min.js"),
 * so the check can read "jQuery v3.4.1" from the file: only the content confirms a version, the
 * file name is a hint of what to read. At most MAX_BANNER_FETCHES reads per audit (the count lives
 * in the crawl state, so it holds across steps and processes; past it the cap is noted in
 * `limits_hit` as `library_scripts`), each script read once per audit (its head is kept in KV for
 * later steps), robots.txt of the script's origin honoured, 5 s timeout, through the address
 * guard. A read that fails or is not allowed leaves the version unknown, and nothing is reported.
 *
 * @module
 */
import { keys, read } from "../../platform/mod.ts";
import { namesLibrary } from "../js_libraries.ts";
import { noteCap } from "./caps.ts";
import { fetchBanner, type FetchSettings } from "./fetcher.ts";
import type { RobotsSource } from "./robots_source.ts";
import type { CrawlState } from "./state.ts";
import { MAX_URL_LENGTH, type WriteBatch } from "./store.ts";

/** Script files read for a library banner per audit. */
export const MAX_BANNER_FETCHES = 20;

export class BannerReader {
  /** This step's reads and lookups, by script URL (concurrent pages share one read). */
  private readonly memo = new Map<string, Promise<string | null>>();

  constructor(
    private readonly kv: Deno.Kv,
    private readonly auditId: string,
    private readonly settings: FetchSettings,
    private readonly robots: RobotsSource,
    private readonly state: CrawlState,
    private readonly batch: WriteBatch,
  ) {}

  /** Heads of the page's library scripts (script URL → head), or undefined. */
  async headsOf(scripts: readonly string[]): Promise<Map<string, string> | undefined> {
    let out: Map<string, string> | undefined;
    for (const src of scripts) {
      if (!namesLibrary(src)) continue;
      const head = await this.headOf(src);
      if (head !== null) (out ??= new Map()).set(src, head);
    }
    return out;
  }

  private headOf(url: string): Promise<string | null> {
    let p = this.memo.get(url);
    if (!p) {
      p = this.load(url).catch(() => null);
      this.memo.set(url, p);
    }
    return p;
  }

  private async load(url: string): Promise<string | null> {
    if (url.length > MAX_URL_LENGTH) return null; // no KV key holds it: left unread
    const key = keys.auditBanner(this.auditId, url);
    const stored = await read(this.kv, key);
    if (stored.value !== null) return stored.value.head;
    const robots = await this.robots.for(new URL(url).origin);
    if (!robots.isAllowed(url)) {
      this.batch.set(key, { head: null });
      return null;
    }
    // Checked and taken after the last await, before the fetch: concurrent pages see the count.
    // Past the cap nothing is stored, so a later audit-wide view stays "not read".
    const used = this.state.banners ?? 0;
    if (used >= MAX_BANNER_FETCHES) {
      // Noted once per script and step (the memo holds the answer for the rest of the step).
      noteCap(this.state.capsHit ??= {}, "library_scripts", MAX_BANNER_FETCHES);
      return null;
    }
    this.state.banners = used + 1;
    const head = await fetchBanner(this.settings, url);
    this.batch.set(key, { head });
    return head;
  }
}
