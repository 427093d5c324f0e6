/**
 * The one coded failure type for jobs. A job step that fails for a known reason throws a
 * `JobFailure` (or a subclass carrying more, as `TargetRefusedError` carries its reason); the job
 * reads the `code`, never the error's name, to decide what it stores. Anything else is unexpected:
 * logged, and stored under the job's own fallback code.
 *
 * @module
 */

/** Every known reason a job fails for that is not a bug. */
export type JobFailureCode =
  /** The address guard refused the site's address (private, bad scheme, no DNS...). */
  | "target_refused"
  /** The browser cannot start here, or this server does not render pages. */
  | "rendering_unavailable"
  /** The job's sealed staging credentials do not open (the operator key changed, or gone). */
  | "auth_unavailable";

/**
 * A job failure with a known code.
 *
 * @example
 * ```ts
 * import { JobFailure } from "./job_failure.ts";
 *
 * throw new JobFailure("rendering_unavailable", "This server does not render pages");
 * ```
 */
export class JobFailure extends Error {
  constructor(readonly code: JobFailureCode, message: string) {
    super(message);
    this.name = "JobFailure";
  }
}

/** What a job stores on its failed record. */
export interface StoredFailure {
  code: string;
  message: string;
}

/**
 * Classifies `err` by its code: a `JobFailure` takes the stored failure its code maps to
 * (`expected`: no error log), anything else the job's `fallback`.
 *
 * @example
 * ```ts
 * import { classifyFailure, JobFailure } from "./job_failure.ts";
 *
 * const { failure, expected } = classifyFailure(
 *   new JobFailure("auth_unavailable", "gone"),
 *   {
 *     target_refused: () => ({ code: "target_refused", message: "Refused" }),
 *     rendering_unavailable: () => ({ code: "rendering_unavailable", message: "No browser" }),
 *     auth_unavailable: () => ({ code: "auth_unavailable", message: "No credentials" }),
 *   },
 *   { code: "job_failed", message: "The job could not run" },
 * );
 * ```
 */
export function classifyFailure(
  err: unknown,
  byCode: { [C in JobFailureCode]: (failure: JobFailure) => StoredFailure },
  fallback: StoredFailure,
): { failure: StoredFailure; expected: boolean } {
  if (err instanceof JobFailure) return { failure: byCode[err.code](err), expected: true };
  return { failure: fallback, expected: false };
}
