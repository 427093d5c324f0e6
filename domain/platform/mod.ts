/**
 * The kernel every capability builds on: `Deps`, the clock, ids, errors, events, the key table
 * (`store.ts`), cursors, idempotent requests and small helpers. The public face of the folder; it
 * imports no other domain folder but their `types.ts` leaves.
 *
 * @example
 * ```ts
 * import { ApiError, newId } from "./mod.ts";
 * const id = newId("aud");
 * const err = new ApiError("not_found", `No audit ${id}`);
 * ```
 *
 * @module
 */
export { type Clock, iso, systemClock } from "./clock.ts";
export type { Config, ServiceRole } from "./config.ts";
export type { Deps, JobMessage, JobQueue } from "./deps.ts";
export { ApiError, ERROR_CODES, type ErrorCode } from "./errors.ts";
export { EVENT_NAMES, recordEvent } from "./events.ts";
export { checkIdempotencyKey, idempotencyScope, runIdempotent } from "./idempotent_request.ts";
export { newId, randomPart } from "./ids.ts";
export { classifyFailure, JobFailure } from "./job_failure.ts";
export { KvMemo } from "./kv_memo.ts";
export { badCursor, decodeCursor, encodeCursor } from "./list_cursor.ts";
export { sha256Hex } from "./replay_seal.ts";
export { secureEqual } from "./secure_compare.ts";
export {
  type Atomic,
  atomic,
  type Key,
  keys,
  type LeaseRecord,
  list,
  type ListedEntry,
  type ListIterator,
  type Prefix,
  type QueuedJob,
  read,
  readAll,
  readMany,
  write,
} from "./store.ts";
export { describeIssue } from "./zod_issue.ts";
