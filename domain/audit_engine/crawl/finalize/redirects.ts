/**
 * The crawl's internal redirects (built by the records pass) by URL hash: where a URL's
 * redirects end, the chains and loops they form (redirect_chain, redirect_loop), and the
 * redirects that end broken, which are broken link targets too.
 *
 * Memory: 8 bytes for the target's hash and 4 for a broken end, beside the 20 of the hash index
 * (hash_index.ts), per redirecting URL, in typed arrays; the URL strings are in KV
 * (url_names.ts), read back for the chains and loops kept as evidence.
 *
 * @example
 * ```ts
 * import { urlHash } from "../store.ts";
 * import type { Facts } from "./facts.ts";
 * import type { BrokenTargets } from "./targets.ts";
 * import type { UrlNames } from "./url_names.ts";
 * declare const f: Facts, broken: BrokenTargets, names: UrlNames;
 * const redirects = new Redirects();
 * redirects.add(urlHash("https://a.test/old"), urlHash("https://a.test/new"));
 * redirects.follow(urlHash("https://a.test/old")); // urlHash("https://a.test/new")
 * await redirectChains(redirects, broken, f, names);
 * await brokenRedirects(redirects, broken);
 * ```
 *
 * @module
 */
import { Pacer, yieldToLoop } from "../event_loop.ts";
import type { Facts } from "./facts.ts";
import { grown, sortedIndexOf } from "../sorted_hashes.ts";
import { HashIndex } from "./hash_index.ts";
import type { BrokenTargets } from "./targets.ts";
import type { UrlNames } from "./url_names.ts";

/** Hops followed along a chain (redirects, canonicals) before it counts as a loop. */
export const MAX_HOPS = 10;

/** Internal redirects, source hash → target hash, in the order the records pass met them. */
export class Redirects {
  readonly #from = new HashIndex();
  #to = new Float64Array(256);

  /** One redirect (each source once). */
  add(from: number, to: number): void {
    const i = this.#from.push(from);
    this.#to = grown(this.#to, i + 1);
    this.#to[i] = to;
  }

  /** Redirecting URLs. */
  get size(): number {
    return this.#from.size;
  }

  /** The source of the i-th redirect. */
  fromAt(i: number): number {
    return this.#from.hashAt(i);
  }

  /** The target of the i-th redirect. */
  toAt(i: number): number {
    return this.#to[i];
  }

  /** Where the URL redirects (one hop), or -1 when it does not. */
  targetOf(hash: number): number {
    const i = this.#from.indexOf(hash);
    return i < 0 ? -1 : this.#to[i];
  }

  /** Where a URL's internal redirects end (itself when none), or -1 on a loop / over 10 hops. */
  follow(hash: number): number {
    let cur = hash;
    for (let i = 0; i <= MAX_HOPS; i++) {
      const next = this.targetOf(cur);
      if (next < 0) return cur;
      cur = next;
    }
    return -1;
  }
}

/**
 * Redirects walked between two batched reads of URL names: a pure cycle's members are read once
 * per window, not one round trip per cycle (a remote KV would pay one per member).
 */
const CHAIN_WINDOW = 1024;

/** One redirecting URL's walk: its hops, where it stopped, and whether it looped. */
interface Walk {
  url: number;
  hops: number[];
  seen: Set<number>;
  cur: number;
  loop: boolean;
}

function walk(redirects: Redirects, url: number): Walk {
  const hops = [url];
  const seen = new Set(hops);
  let cur = url;
  let loop = false;
  for (let next = redirects.targetOf(cur); next >= 0; next = redirects.targetOf(cur)) {
    cur = next;
    hops.push(cur);
    if (seen.has(cur) || hops.length > MAX_HOPS + 1) {
      loop = true;
      break;
    }
    seen.add(cur);
  }
  return { url, hops, seen, cur, loop };
}

/** Redirect chains from every redirecting URL that no other redirect points at; cycles once. */
export async function redirectChains(
  redirects: Redirects,
  broken: BrokenTargets,
  f: Facts,
  names: UrlNames,
): Promise<void> {
  const n = redirects.size;
  const pointedAt = new Float64Array(n);
  for (let i = 0; i < n; i++) pointedAt[i] = redirects.toAt(i);
  pointedAt.sort();
  const isPointedAt = (h: number) => sortedIndexOf(pointedAt, h) >= 0;
  const pace = new Pacer();
  for (let start = 0; start < n; start += CHAIN_WINDOW) {
    // Chain heads only; members of a pure cycle have no head, so the cycle is counted once, from
    // its smallest URL (the strings compared: read for the cycles' members alone).
    const walks: Walk[] = [];
    const cycleMembers = new Set<number>();
    for (let i = start; i < Math.min(n, start + CHAIN_WINDOW); i++) {
      if (pace.due()) await yieldToLoop();
      const w = walk(redirects, redirects.fromAt(i));
      if (isPointedAt(w.url)) {
        if (!(w.loop && w.cur === w.url)) continue;
        for (const m of w.seen) cycleMembers.add(m);
      }
      walks.push(w);
    }
    const members = [...cycleMembers];
    const urls = members.length > 0 ? await names.get(members) : [];
    const nameOf = new Map(members.map((h, k) => [h, urls[k]]));
    for (const { url, hops, seen, cur, loop } of walks) {
      if (isPointedAt(url)) {
        const smallest = [...seen].sort((a, b) => nameOf.get(a)! < nameOf.get(b)! ? -1 : 1)[0];
        if (smallest !== url) continue;
      }
      f.redirectStarts++;
      const kept = hops.slice(0, 12);
      const item = { url: "", hops: kept.map(() => ""), hop_count: hops.length - 1 };
      const group = loop ? f.redirectLoops : hops.length - 1 >= 2 ? f.redirectChains : null;
      if (group === null) continue;
      const evidence = group === f.redirectChains
        ? { ...item, final_status: broken.get(cur)?.status ?? null }
        : item;
      if (!group.add(evidence)) continue;
      names.later(evidence, "url", url);
      kept.forEach((h, k) => names.later(evidence.hops, k, h));
    }
  }
}

/**
 * A redirect that ends broken is a broken link target too (`broken.alias`). A loop is not a
 * broken target: the loop is one defect, charged once as redirect_loop.
 */
export async function brokenRedirects(redirects: Redirects, broken: BrokenTargets): Promise<void> {
  const pace = new Pacer();
  for (let i = 0; i < redirects.size; i++) {
    if (pace.due()) await yieldToLoop();
    const url = redirects.fromAt(i);
    const end = redirects.follow(url);
    if (end >= 0 && broken.hasOwn(end) && !broken.hasOwn(url)) broken.alias(url, end);
  }
}
