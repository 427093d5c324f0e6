/**
 * Persisted shapes of the job table: queued job tasks and the running-job markers.
 *
 * A leaf: it imports only other capabilities' `types.ts`, so the key table (domain/platform/store.ts)
 * depends on no module with code.
 *
 * @module
 */

/** Marker of an audit, article or re-check that was accepted and has not finished, with its lease. */
export interface RunningJobMarker {
  id: string;
  accountId: string;
  leaseUntil: number;
  /** The process that holds the lease (its `Deps.worker`); absent between steps. */
  worker?: string;
}

export interface JobTaskRecord {
  /** The task id: the job's id (`aud_…`, `art_…`). */
  taskId: string;
  accountId: string;
  kind: JobTaskKind;
  /** When the handle was first opened (epoch ms). */
  createdAt: number;
  /** The API key that opened it; null when none did. */
  keyId: string | null;
}

export type JobTaskKind = "audit" | "article";
