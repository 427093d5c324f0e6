/**
 * The URL strings of the site-wide passes' redirecting and failing URLs, kept in KV by URL hash
 * (`keys.auditUrlName`, private to the running audit, pruned with its crawl state) rather than in
 * memory: the passes hold numbers per such URL (redirects.ts, failing.ts, targets.ts) and read
 * strings back only for the evidence a finding keeps (FINDINGS_CAP items each) and for the few
 * URLs they open (the home page, fragment targets), in batched reads. The records pass writes
 * the names and flushes them before any pass reads one; repeating the step writes the same ones.
 *
 * An item is made with an empty string where a URL goes and `later` fills it in the same place
 * (the evidence's key order is unchanged), once the group kept it.
 *
 * @example
 * ```ts
 * import { urlHash } from "../store.ts";
 * declare const kv: Deno.Kv, auditId: string;
 * const names = new UrlNames(kv, auditId);
 * const url = "https://a.test/gone";
 * names.remember(urlHash(url), url);
 * await names.flush();
 * const item = { url: "", status: 404 };
 * names.later(item, "url", urlHash(url));
 * await names.fill(); // item.url === url
 * ```
 *
 * @module
 */
import { keys } from "../../../platform/mod.ts";
import { getMany, WriteBatch } from "../store.ts";

/** A place a URL goes once read: `at[key]`. */
interface Fill {
  at: Record<string | number, unknown>;
  key: string | number;
  hash: number;
}

/** URL strings by hash, written once per URL and read in batches. */
export class UrlNames {
  readonly #kv: Deno.Kv;
  readonly #auditId: string;
  readonly #batch: WriteBatch;
  #fills: Fill[] = [];

  constructor(kv: Deno.Kv, auditId: string) {
    this.#kv = kv;
    this.#auditId = auditId;
    this.#batch = new WriteBatch(kv);
  }

  /**
   * Hashes written since the last `endPage`: a URL met twice in one KV page of records (a
   * redirect target that is a failing record too) is written once, as one commit takes one write
   * of a key; across pages a repeat is an equal write in another commit.
   */
  #page = new Set<number>();

  /** Stores a URL under its hash (see `endPage`). */
  remember(hash: number, url: string): void {
    if (this.#page.has(hash)) return;
    this.#page.add(hash);
    this.#batch.set(keys.auditUrlName(this.#auditId, hash), url);
  }

  /** After each KV page of records: sends what it named, and forgets which hashes those were. */
  endPage(): void {
    this.#batch.send();
    this.#page.clear();
  }

  /** Commits every name remembered; reads after it see them. */
  async flush(): Promise<void> {
    this.#page.clear();
    await this.#batch.flush();
  }

  /** The URLs of these hashes ("" for a hash never remembered). */
  async get(hashes: readonly number[]): Promise<string[]> {
    const got = await getMany(this.#kv, hashes.map((h) => keys.auditUrlName(this.#auditId, h)));
    return got.map((u) => u ?? "");
  }

  /** `at[key]` gets the URL of `hash` at the next `fill`. */
  later<T extends object>(at: T, key: keyof T & (string | number), hash: number): void {
    this.#fills.push({ at: at as Record<string | number, unknown>, key, hash });
  }

  /** Reads the URLs of every pending `later` (each distinct hash once) and sets them. */
  async fill(): Promise<void> {
    const fills = this.#fills;
    this.#fills = [];
    const distinct = [...new Set(fills.map((x) => x.hash))];
    const urls = await this.get(distinct);
    const byHash = new Map(distinct.map((h, i) => [h, urls[i]]));
    for (const x of fills) x.at[x.key] = byHash.get(x.hash)!;
  }
}
