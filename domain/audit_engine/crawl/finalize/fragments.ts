/**
 * `broken_fragment`, site-wide: every page's stored fragment links (crawl/anchors.ts) read in KV
 * pages, each target followed through the site's internal redirects, and its stored anchors read
 * in batches of TARGETS_PER_READ; a link whose fragment names no `id` or `<a name>` of its target
 * is broken (page → link → missing anchor). A target that is not an HTML page the crawl fetched
 * (not crawled, failed, a PDF), or whose anchors were more than the per-page cap, is not judged.
 *
 * Memory: one batch of targets' anchor sets (each at most MAX_ANCHORS hashes) and one KV page of
 * fragment links (each page at most MAX_FRAGMENT_LINKS). Where a redirected target ends is a
 * hash (redirects.ts); its URL is read from KV with the batch (url_names.ts).
 *
 * @example
 * ```ts
 * import type { Facts } from "./facts.ts";
 * import type { Redirects } from "./redirects.ts";
 * import type { UrlNames } from "./url_names.ts";
 * declare const kv: Deno.Kv, auditId: string, f: Facts, redirects: Redirects, names: UrlNames;
 * await readFragments(kv, auditId, f, redirects, names);
 * f.brokenFragments.count; // pages with a link to a missing anchor
 * ```
 *
 * @module
 */
import type { AnchorsValue } from "../../types.ts";
import { keys } from "../../../platform/mod.ts";
import { anchorHash, fragmentNames } from "../../facts/fragments.ts";
import { yieldToLoop } from "../event_loop.ts";
import { getMany, listInPages, urlHash } from "../store.ts";
import type { Facts } from "./facts.ts";
import type { Redirects } from "./redirects.ts";
import type { UrlNames } from "./url_names.ts";

/** Distinct targets whose anchor sets are held at once. */
const TARGETS_PER_READ = 64;
/** Pages of fragment links per KV read. */
const PAGES_PER_READ = 100;

interface Pending {
  /** The linking page. */
  src: string;
  /** The link's target as written (canonical) and where its redirects end (null: not read yet). */
  target: string;
  final: string | null;
  finalHash: number;
  fragment: string;
}

/** Reads every fragment link once; fills `f.fragmentPages` and `f.brokenFragments`. */
export async function readFragments(
  kv: Deno.Kv,
  auditId: string,
  f: Facts,
  redirects: Redirects,
  names: UrlNames,
): Promise<void> {
  let pending: Pending[] = [];
  const targets = new Set<number>();
  // The page whose links are being judged: counted once as judged, once as broken.
  let judgedSrc = "";
  let brokenSrc = "";
  const resolve = async () => {
    const unnamed = [...new Set(pending.filter((p) => p.final === null).map((p) => p.finalHash))];
    const named = new Map((await names.get(unnamed)).map((u, i) => [unnamed[i], u]));
    for (const p of pending) p.final ??= named.get(p.finalHash)!;
    const list = [...new Set(pending.map((p) => p.final!))];
    const sets = await getMany(kv, list.map((u) => keys.auditAnchors(auditId, u)));
    const byUrl = new Map<string, AnchorsValue | null>(list.map((u, i) => [u, sets[i]]));
    const hashes = new Map<string, Set<number>>();
    for (const p of pending) {
      const a = byUrl.get(p.final!);
      if (!a || a.more) continue;
      if (p.src !== judgedSrc) {
        judgedSrc = p.src;
        f.fragmentPages++;
      }
      let set = hashes.get(p.final!);
      if (!set) hashes.set(p.final!, set = new Set(a.h));
      const names = fragmentNames(p.fragment);
      if (names.some((n) => set.has(anchorHash(n)))) continue;
      f.brokenFragments.add(
        {
          url: p.src,
          link: `${p.target}#${p.fragment}`,
          target: p.final,
          missing_anchor: names[0],
        },
        p.src !== brokenSrc,
      );
      brokenSrc = p.src;
    }
    pending = [];
    targets.clear();
    await yieldToLoop();
  };
  for await (const page of listInPages(kv, keys.auditFragLinksAll(auditId), PAGES_PER_READ)) {
    for (const e of page) {
      const src = e.key[2];
      const { t, f: frags } = e.value;
      // A page's links are judged in one batch, so its counts stay together.
      if (targets.size + t.length > TARGETS_PER_READ && pending.length > 0) await resolve();
      for (let i = 0; i < t.length; i++) {
        const h = urlHash(t[i]);
        const end = redirects.follow(h);
        if (end < 0) continue; // a redirect loop: internal_redirect_links says so
        targets.add(end);
        pending.push({
          src,
          target: t[i],
          final: end === h ? t[i] : null,
          finalHash: end,
          fragment: frags[i],
        });
      }
    }
  }
  if (pending.length > 0) await resolve();
}
