/**
 * Why a render did not produce a result, in a leaf of its own so the crawl can tell a render
 * failure apart without loading the browser pool (and playwright) into every process.
 *
 * @module
 */

/** Why a render did not produce a result. */
export type RenderFailureKind = "timeout" | "crashed" | "unavailable" | "closed";

/** Thrown by the browser pool when a render fails; `kind` says how. */
export class RenderFailedError extends Error {
  constructor(readonly kind: RenderFailureKind, message: string) {
    super(message);
    this.name = "RenderFailedError";
  }
}
