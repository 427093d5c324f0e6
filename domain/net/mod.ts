/**
 * Outbound network safety: the address guard (only public targets) and the guarded fetch the
 * crawler, webhooks and OAuth client documents use, and the kept-alive connections a crawl step
 * opts into. The public face of the capability.
 *
 * @example
 * ```ts
 * import { checkUrlTarget, TargetRefusedError } from "./mod.ts";
 * try {
 *   await checkUrlTarget("https://example.com/", { allowPrivate: false });
 * } catch (err) {
 *   if (!(err instanceof TargetRefusedError)) throw err;
 * }
 * ```
 *
 * @module
 */
export { checkUrlTarget, PUBLIC_HOST_TEXT, TargetRefusedError } from "./address_guard.ts";
export { FetchFailedError, type Resolver, safeFetch, type SafeResponse } from "./safe_fetch.ts";
export { ConnectionPool } from "./pool.ts";
