/**
 * Libraries for `vulnerable_js_library`, read from script files' content whatever their names:
 * the first BANNER_BYTES (64 KiB) of every same-site external script, and of other hosts'
 * scripts whose URL names a known library (the page facts choose them, facts/scripts.ts), so
 * `/js/lib.js` holding jQuery 1.8.3 is found and a file named jquery-1.8.3.min.js that holds
 * 3.7.1 is 3.7.1 (js_libraries.ts `scriptLibrary`). At most MAX_BANNER_FETCHES reads per audit
 * (the count lives in the crawl state, so it holds across steps and processes; past it the cap
 * is noted in `limits_hit` as `library_scripts`), each script read once per audit (what it
 * showed is kept in KV for later steps, so a repeated step reads nothing twice), robots.txt of
 * the script's origin honoured, 5 s timeout, through the address guard and the byte budget. A
 * read that fails or is not allowed leaves the library unknown, and nothing is reported.
 *
 * What each script showed is the check's own working data (check_data.ts, under the check's
 * id). Audits before that stored it under `audit_banners`: a miss there is looked up too, so an
 * audit running across the change reads no script twice.
 *
 * @module
 */
import type { ScriptLibrary, ScriptLibraryValue } from "../types.ts";
import { keys, readMany } from "../../platform/mod.ts";
import { checkData } from "../check_data.ts";
import { scriptLibrary } from "../js_libraries.ts";
import { noteCap } from "./caps.ts";
import { fetchBanner, type FetchSettings } from "./fetcher.ts";
import type { RobotsSource } from "./robots_source.ts";
import type { CrawlState } from "./state.ts";
import { MAX_URL_LENGTH, type WriteBatch } from "./store.ts";

/** Script files read for a library per audit (documented in docs/audit.md). */
export const MAX_BANNER_FETCHES = 200;

/** Per script URL, the library its head showed (null: none, or unreadable). */
export const BANNERS = checkData<ScriptLibraryValue>("vulnerable_js_library");

export class BannerReader {
  /** This step's reads and lookups, by script URL (concurrent pages share one read). */
  private readonly memo = new Map<string, Promise<ScriptLibrary | null>>();

  constructor(
    private readonly kv: Deno.Kv,
    private readonly auditId: string,
    private readonly settings: FetchSettings,
    private readonly robots: RobotsSource,
    private readonly state: CrawlState,
    private readonly batch: WriteBatch,
  ) {}

  /** The libraries the page's scripts show (script URL → library), or undefined. */
  async librariesOf(
    scripts: readonly string[],
  ): Promise<Map<string, ScriptLibrary> | undefined> {
    let out: Map<string, ScriptLibrary> | undefined;
    for (const src of scripts) {
      const lib = await this.libraryOf(src);
      if (lib !== null) (out ??= new Map()).set(src, lib);
    }
    return out;
  }

  private libraryOf(url: string): Promise<ScriptLibrary | null> {
    let p = this.memo.get(url);
    if (!p) {
      p = this.load(url).catch(() => null);
      this.memo.set(url, p);
    }
    return p;
  }

  private async load(url: string): Promise<ScriptLibrary | null> {
    if (url.length > MAX_URL_LENGTH) return null; // no KV key holds it: left unread
    const key = BANNERS.key(this.auditId, url);
    const [stored, before] = await readMany(this.kv, [key, keys.auditBanner(this.auditId, url)]);
    const known = stored.value ?? before.value;
    if (known !== null) return known.lib;
    const robots = await this.robots.for(new URL(url).origin);
    if (!robots.isAllowed(url)) {
      this.batch.set(key, { lib: null });
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
    const lib = head === null ? null : scriptLibrary(url, head);
    this.batch.set(key, { lib });
    return lib;
  }
}
