/**
 * Rechecks: re-running one check of a completed audit on its affected URLs, as a job. The public
 * face of the capability; the persisted shapes are in `types.ts`.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/mod.ts";
 * declare const deps: Deps, accountId: string;
 * import { getRecheck } from "./mod.ts";
 * const recheck = await getRecheck(deps, accountId, "rck_123", "live");
 * ```
 *
 * @module
 */
export { createRecheck } from "./create.ts";
export { type RecheckRunner, runRecheckJob } from "./job.ts";
export { getRecheck, listRecheckItems, type RecheckRecord } from "./record.ts";
