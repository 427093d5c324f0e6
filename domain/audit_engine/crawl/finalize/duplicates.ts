/**
 * Pass 3a, exact duplicates: groups of pages with the same title, description or text, read from
 * the duplicate index (page_recorder.ts writes it; crawl/dup_runs.ts reads it back contiguous by
 * the text's digest). Every member of a group of 2+ is affected. Text groups whose URLs are one
 * page at several addresses (letter case, query strings) are counted as URL variants instead,
 * once, where they are fixed.
 *
 * Memory: per kind, at most dup_runs.ts PASS_ENTRIES entries of the index (twice that on a slow
 * KV, reading ahead: `bucketsAhead`), or a text's first 50 URLs and 8 bytes per page sharing it
 * when more pages share it than that; then 8 bytes per group of identical texts (a typed array).
 *
 * @example
 * ```ts
 * import { nearDuplicates, type Twins } from "./near_duplicates.ts";
 * import type { Facts } from "./facts.ts";
 * declare const kv: Deno.Kv, auditId: string, f: Facts;
 * // Twins (identical texts) are not near-duplicates: that pass gets them.
 * const near = (twins: Twins) => nearDuplicates(kv, auditId, twins, f.nearDupContent);
 * await duplicateGroups(kv, auditId, f, near);
 * ```
 *
 * @module
 */
import type { Evidence } from "../../types.ts";
import { dupGroups, type DupKind, KEEP_URLS } from "../dup_runs.ts";
import { HashKeys } from "../sorted_hashes.ts";
import type { Facts, Group } from "./facts.ts";
import type { Twins } from "./near_duplicates.ts";

/**
 * Fills the title, description and content duplicate groups (and the case and parameter
 * variants); `afterContent` (the near-duplicate pass) gets the text hashes that have an
 * identical twin once the content groups are in, and runs beside the other kinds. `ahead` (a
 * slow KV, dup_runs.ts `bucketsAhead`): the buckets each kind reads ahead while it groups one.
 */
export async function duplicateGroups(
  kv: Deno.Kv,
  auditId: string,
  f: Facts,
  afterContent: (twins: Twins) => Promise<void>,
  ahead = 0,
): Promise<void> {
  // Sorted once the content groups are in, then looked up: 8 bytes a group, outside V8's heap.
  const twins = new HashKeys();
  // Side by side: each kind fills its own groups, in its own index order.
  await Promise.all([
    duplicates(kv, auditId, ahead, "title", f.dupTitle, (v) => ({ title: v })),
    duplicates(
      kv,
      auditId,
      ahead,
      "description",
      f.dupDescription,
      (v) => ({ description: v }),
    ),
    duplicates(
      kv,
      auditId,
      ahead,
      "content",
      f.dupContent,
      (v) => ({ fingerprint: v }),
      (v) => twins.add(Number(v)),
      { case: f.caseDuplicates, param: f.parameterDuplicates },
    ).then(async () => {
      try {
        await afterContent({ has: (h) => twins.indexOf(h) >= 0 });
      } finally {
        twins.release();
      }
    }),
  ]);
}

/** Where a URL's duplicates would be one page: its origin and path, lower-cased. */
function variantKey(url: string): { key: string; query: string } {
  const u = new URL(url);
  return { key: (u.origin + u.pathname).toLowerCase(), query: u.search };
}

/**
 * Groups of the duplicate index of one kind (contiguous by the text's digest; the text itself is
 * in each entry's value): every member of a group of 2+ is affected.
 * With `variants`, a group whose URLs are all one path up to letter case goes to `variants.case`,
 * and one whose URLs are one path with different query strings to `variants.param`: the same
 * page at several addresses, counted once, where it is fixed.
 */
async function duplicates(
  kv: Deno.Kv,
  auditId: string,
  ahead: number,
  kind: DupKind,
  g: Group,
  show: (value: string) => Evidence,
  onGroup?: (value: string) => void,
  variants?: { case: Group; param: Group },
): Promise<void> {
  // A group's first KEEP_URLS URLs are held (for `same_as` and the items); the rest are counted.
  const opts = { ahead, keep: KEEP_URLS, variantOf: variants ? variantKey : undefined };
  for await (const group of dupGroups(kv, auditId, kind, opts)) {
    const { text, size, first: members, oneKey, queriesDiffer } = group;
    if (size < 2) continue;
    onGroup?.(text);
    const into = !variants || !oneKey ? g : queriesDiffer ? variants.param : variants.case;
    const differs: Evidence = into === g ? {} : { differs_in: queriesDiffer ? "query" : "case" };
    for (const url of members) {
      into.add({
        url,
        ...show(text),
        ...differs,
        group_size: size,
        same_as: members.filter((m) => m !== url).slice(0, 5),
      });
    }
    // Members past KEEP_URLS are counted, not named.
    into.count += size - members.length;
  }
}
