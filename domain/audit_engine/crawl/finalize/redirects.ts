/**
 * The crawl's internal redirects, read as a map `url → target` (built by the records pass):
 * where a URL's redirects end, the chains and loops they form (redirect_chain, redirect_loop),
 * and the redirecting URLs as link targets, where a redirect that ends broken is broken too.
 *
 * @example
 * ```ts
 * import type { Facts } from "./facts.ts";
 * declare const f: Facts, broken: Parameters<typeof redirectLinkTargets>[1];
 * const redirects = new Map([["https://a.test/old", "https://a.test/new"]]);
 * followRedirects(redirects, "https://a.test/old"); // "https://a.test/new"
 * await redirectChains(redirects, broken, f);
 * const targets = await redirectLinkTargets(redirects, broken);
 * ```
 *
 * @module
 */
import { Pacer, yieldToLoop } from "../event_loop.ts";
import { urlHash } from "../store.ts";
import type { Facts } from "./facts.ts";
import type { BrokenTarget, RedirectTarget } from "./targets.ts";

/** Hops followed along a chain (redirects, canonicals) before it counts as a loop. */
export const MAX_HOPS = 10;

/** Where a URL's internal redirects end, or null on a loop / more than 10 hops. */
export function followRedirects(
  redirects: ReadonlyMap<string, string>,
  url: string,
): string | null {
  let cur = url;
  for (let i = 0; i <= MAX_HOPS; i++) {
    const next = redirects.get(cur);
    if (next === undefined) return cur;
    cur = next;
  }
  return null;
}

/** Redirect chains from every redirecting URL that no other redirect points at; cycles once. */
export async function redirectChains(
  redirects: ReadonlyMap<string, string>,
  broken: ReadonlyMap<number, { status: number }>,
  f: Facts,
): Promise<void> {
  const pointedAt = new Set(redirects.values());
  const pace = new Pacer();
  for (const url of redirects.keys()) {
    if (pace.due()) await yieldToLoop();
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
 * Every redirecting URL by hash, as a link target ("redirect" targets). A redirect that ends
 * broken is added to `broken` as a broken link target too. A loop is not a broken target: the
 * loop is one defect, charged once as redirect_loop.
 */
export async function redirectLinkTargets(
  redirects: ReadonlyMap<string, string>,
  broken: Map<number, BrokenTarget>,
): Promise<Map<number, RedirectTarget>> {
  const targets = new Map<number, RedirectTarget>();
  const pace = new Pacer();
  for (const [url, target] of redirects) {
    if (pace.due()) await yieldToLoop();
    targets.set(urlHash(url), { url, target });
    const end = followRedirects(redirects, url);
    if (end !== null && broken.has(urlHash(end)) && !broken.has(urlHash(url))) {
      const b = broken.get(urlHash(end))!;
      broken.set(urlHash(url), { url, status: b.status, failure: b.failure });
    }
  }
  return targets;
}
