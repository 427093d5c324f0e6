/**
 * When to poll a job just started (issue 33): the `poll_after_seconds` of every 202 (and its
 * `Retry-After` header), and the MCP task's `pollIntervalMs`. Deliberately simple, and stated in
 * the README: the job's own size at an assumed pace, plus a little per job waiting ahead of it,
 * within 2 to 60 seconds.
 *
 * - an audit: its page budget (the crawl budget its funding buys, the rendered budget when it
 *   renders, the listed URLs in list mode) at 20 pages a second;
 * - a re-check: its URLs at 10 a second;
 * - an article: 2 s with the built-in offline writer, 30 s with a model;
 * - plus 1 s per job due in the job table ahead of it (counted up to 50; 0 where the queue is
 *   Deno KV's own `enqueue`, which cannot be counted).
 *
 * @module
 */
import type { Deps } from "../../domain/platform/mod.ts";
import { crawlLimitsFor } from "../../domain/billing/mod.ts";
import { type AuditRecord, crawlDepth } from "../../domain/audits/mod.ts";

export const POLL_MIN_SECONDS = 2;
export const POLL_MAX_SECONDS = 60;
const QUEUE_COUNT_CAP = 50;

/** Jobs due in the job table (at most 50). */
export async function queueDepth(deps: Deps): Promise<number> {
  let n = 0;
  for await (const _ of deps.kv.list({ prefix: ["job_queue"] }, { limit: QUEUE_COUNT_CAP })) n++;
  return n;
}

/** Seconds of work at a pace, plus the queue ahead, clamped to 2..60. */
export function pollAfter(workSeconds: number, queued: number): number {
  const s = Math.ceil(workSeconds + queued);
  return Math.min(POLL_MAX_SECONDS, Math.max(POLL_MIN_SECONDS, s));
}

/** The pages an audit may fetch: its listed URLs, its rendered budget, or its crawl budget. */
export async function auditPages(deps: Deps, audit: AuditRecord): Promise<number> {
  const c = deps.config;
  if (audit.options?.urls?.length) return audit.options.urls.length;
  if (audit.render) return c.render.maxPages;
  return crawlLimitsFor(await crawlDepth(deps, audit), c).maxPages;
}

export function auditPollSeconds(pages: number, queued: number): number {
  return pollAfter(pages / 20, queued);
}

export function recheckPollSeconds(urls: number, queued: number): number {
  return pollAfter(urls / 10, queued);
}

export function articlePollSeconds(deps: Deps, queued: number): number {
  return pollAfter(deps.config.openai.apiKey ? 30 : 2, queued);
}
