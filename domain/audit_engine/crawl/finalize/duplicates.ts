/**
 * Pass 3a, exact duplicates: groups of pages with the same title, description or text, read from
 * the duplicate index (page_recorder.ts writes it; crawl/dup_runs.ts reads it back contiguous by
 * the text's digest). Every member of a group of 2+ is affected. Text groups whose URLs are one
 * page at several addresses (letter case, query strings) are counted as URL variants instead,
 * once, where they are fixed.
 *
 * Memory: per kind, the index's entries of one digest bucket (at most dup_runs.ts PASS_ENTRIES)
 * and the current group's first 50 URLs; then one number per group of identical texts.
 *
 * @example
 * ```ts
 * import { nearDuplicates } from "./near_duplicates.ts";
 * import type { Facts } from "./facts.ts";
 * declare const kv: Deno.Kv, auditId: string, f: Facts;
 * // Twins (identical texts) are not near-duplicates: that pass gets them.
 * const near = (twins: Set<number>) => nearDuplicates(kv, auditId, twins, f.nearDupContent);
 * await duplicateGroups(kv, auditId, f, near);
 * ```
 *
 * @module
 */
import type { Evidence } from "../../types.ts";
import { type DupKind, sortedDupEntries } from "../dup_runs.ts";
import type { Facts, Group } from "./facts.ts";

/** URLs of a group held (for `same_as` and the items); the rest are only counted. */
const KEEP = 50;

/**
 * Fills the title, description and content duplicate groups (and the case and parameter
 * variants); `afterContent` (the near-duplicate pass) gets the text hashes that have an
 * identical twin once the content groups are in, and runs beside the other kinds. `ahead` (a
 * slow KV): each kind reads its index's next bucket while it groups one.
 */
export async function duplicateGroups(
  kv: Deno.Kv,
  auditId: string,
  f: Facts,
  afterContent: (twins: Set<number>) => Promise<void>,
  ahead = false,
): Promise<void> {
  const twins = new Set<number>();
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
    ).then(() => afterContent(twins)),
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
  ahead: boolean,
  kind: DupKind,
  g: Group,
  show: (value: string) => Evidence,
  onGroup?: (value: string) => void,
  variants?: { case: Group; param: Group },
): Promise<void> {
  let value: string | null = null;
  let members: string[] = [];
  let size = 0;
  // Whether every member so far shares the first one's variant key, and how they differ.
  let first: { key: string; query: string } | null = null;
  let oneKey = true;
  let queriesDiffer = false;
  const close = () => {
    if (value === null || size < 2) return;
    onGroup?.(value);
    const into = !variants || !oneKey ? g : queriesDiffer ? variants.param : variants.case;
    const differs: Evidence = into === g ? {} : { differs_in: queriesDiffer ? "query" : "case" };
    for (const url of members) {
      into.add({
        url,
        ...show(value),
        ...differs,
        group_size: size,
        same_as: members.filter((m) => m !== url).slice(0, 5),
      });
    }
    // Members past KEEP are counted, not named.
    into.count += size - members.length;
  };
  let digest: string | null = null;
  for await (const { digest: d, url, text } of sortedDupEntries(kv, auditId, kind, { ahead })) {
    if (d !== digest) {
      close();
      digest = d;
      value = text;
      members = [];
      size = 0;
      first = null;
      oneKey = true;
      queriesDiffer = false;
    }
    size++;
    if (members.length < KEEP) members.push(url);
    if (variants && oneKey) {
      const k = variantKey(url);
      if (first === null) first = k;
      else if (k.key !== first.key) oneKey = false;
      else if (k.query !== first.query) queriesDiffer = true;
    }
  }
  close();
}
