/**
 * A check's own working data during one audit: whatever a site-wide check (or its helper) keeps
 * in KV between the crawl's steps, stored under `audit_check_data` / audit / check id / parts of
 * its choosing. The one prefix is pruned with the rest of the crawl's working state once the
 * audit ends (prune.ts), so a new check that stores something declares its value type here, in
 * its own file, and touches neither the key layout (kv/keys.ts), the store's table
 * (domain/platform/store.ts) nor the pruning list. Working data only: nothing a completed audit
 * serves may live here (it is deleted after every finished audit).
 *
 * @example
 * ```ts
 * import { checkData } from "./check_data.ts";
 * import { read } from "../platform/mod.ts";
 * declare const kv: Deno.Kv, auditId: string;
 * const seen = checkData<{ status: number }>("my_check");
 * const entry = await read(kv, seen.key(auditId, "https://example.com/a")); // { status } | null
 * entry.value?.status;
 * ```
 *
 * @module
 */
import { type Key, keys } from "../platform/mod.ts";

/** Where one check keeps its data: its keys, typed by the check's value. */
export interface CheckData<T> {
  /** The key of one value (`parts`: the check's own, e.g. a URL). */
  key(auditId: string, ...parts: (string | number)[]): Key<T>;
}

/** The data space of `check` (its check id), holding values of type `T`. */
export function checkData<T>(check: string): CheckData<T> {
  return {
    // The store types the family as unknown: each check declares its own value type here.
    key: (auditId, ...parts) => keys.auditCheckData(auditId, check, ...parts) as Key<T>,
  };
}
