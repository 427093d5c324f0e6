/**
 * Canonical targets, one page of records at a time (the records pass calls it): crawled targets
 * that are not indexable 200 pages (canonical_target_bad), and indexable targets that name yet
 * another canonical (canonical_chain), each chain followed to its end.
 *
 * @example
 * ```ts
 * import type { Facts } from "./facts.ts";
 * import type { PageRecord } from "../store.ts";
 * import type { HashList } from "./failing.ts";
 * declare const kv: Deno.Kv, auditId: string, pages: PageRecord[], f: Facts, markLater: HashList;
 * // `pages`: records of one KV page whose canonical names another URL.
 * await canonicalTargets(kv, auditId, pages, f, markLater);
 * ```
 *
 * @module
 */
import { getPages, type PageRecord, urlHash } from "../store.ts";
import type { HashList } from "./failing.ts";
import type { Facts } from "./facts.ts";
import { is2xx } from "./record.ts";
import type { RecordReducer } from "./reducer.ts";
import { MAX_HOPS } from "./redirects.ts";

/** A canonical chain being followed: its URLs so far, and whether it came back on itself. */
interface Chain {
  chain: string[];
  loop: boolean;
}

/**
 * Judges the canonical targets of a page of records. A failing or redirecting target goes into
 * `markLater` (canonical_target_bad charges it, the status checks do not).
 */
export async function canonicalTargets(
  kv: Deno.Kv,
  auditId: string,
  pages: PageRecord[],
  f: Facts,
  markLater: HashList,
): Promise<void> {
  if (pages.length === 0) return;
  const targets = await getPages(kv, auditId, pages.map((p) => p.canonicalOther!));
  const chains: Chain[] = [];
  pages.forEach((p, i) => {
    const t = targets[i];
    if (!t || t.state === "unvisited" || t.state === "queued") return;
    f.canonicalTargets++;
    if (t.state === "failed" || t.status >= 300) markLater.add(urlHash(t.url));
    const bad = t.state !== "fetched" || !is2xx(t) || t.noindex;
    if (bad) {
      f.canonicalBad.add({
        url: p.url,
        canonical: t.url,
        target_status: t.status || null,
        reason: t.state === "blocked"
          ? "blocked by robots.txt"
          : t.state === "failed"
          ? "fetch failed"
          : t.location !== null
          ? "redirects"
          : !is2xx(t)
          ? "error status"
          : "noindex",
      });
    } else if (t.canonicalOther !== null) {
      // The target is an indexable 200 page that names another canonical: a chain (or a loop),
      // which search engines may not follow to its end. Followed below, hop by hop.
      chains.push({ chain: [p.url, t.url, t.canonicalOther], loop: t.canonicalOther === p.url });
    }
  });
  await followCanonicalChains(kv, auditId, chains);
  for (const c of chains) {
    f.canonicalChains.add({
      url: c.chain[0],
      canonical: c.chain[1],
      chain: c.chain,
      hop_count: c.chain.length - 1,
      loop: c.loop,
    });
  }
}

/**
 * Follows each canonical chain to its end: the last URL's record is read while it is an
 * indexable 200 page naming yet another canonical, up to MAX_HOPS hops; a URL met twice closes a
 * loop (of any length). One batched read per hop for all chains of the page of records.
 */
async function followCanonicalChains(
  kv: Deno.Kv,
  auditId: string,
  chains: Chain[],
): Promise<void> {
  let open = chains.filter((c) => !c.loop);
  for (let hop = 2; hop < MAX_HOPS && open.length > 0; hop++) {
    const recs = await getPages(kv, auditId, open.map((c) => c.chain[c.chain.length - 1]));
    const next: Chain[] = [];
    open.forEach((c, i) => {
      const r = recs[i];
      if (!r || r.state !== "fetched" || !r.html || !is2xx(r) || r.noindex) return;
      if (r.canonicalOther === null) return;
      if (c.chain.includes(r.canonicalOther)) c.loop = true;
      c.chain.push(r.canonicalOther);
      if (!c.loop) next.push(c);
    });
    open = next;
  }
}

/** The records pass's reduction: HTML 200 pages whose canonical names another URL, judged after each KV page of records. */
export const canonicalReducer: RecordReducer = {
  id: "canonical_targets",
  start: (pass) => {
    let pages: PageRecord[] = [];
    return {
      add(r) {
        if (r.html && is2xx(r) && r.canonicalOther !== null) pages.push(r);
      },
      async endPage() {
        const batch = pages;
        pages = [];
        await canonicalTargets(pass.kv, pass.auditId, batch, pass.f, pass.markLater);
      },
    };
  },
};
