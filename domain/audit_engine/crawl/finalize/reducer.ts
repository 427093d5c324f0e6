/**
 * The registration a site-wide reduction makes on the records pass (records.ts): every URL's
 * record is read once, in KV pages of 500, and handed to each registered reducer in order.
 * `start` makes the reducer's state for one run; `add` sees each record, `endPage` runs after each
 * KV page (for batched reads of targets), `finish` after the last.
 *
 * @example
 * ```ts
 * import type { RecordReducer } from "./reducer.ts";
 * export const nonHtmlCount: RecordReducer = {
 *   id: "non_html",
 *   start: (pass) => ({
 *     add(r) {
 *       if (!r.html) pass.f.nonHtml2xx++;
 *     },
 *   }),
 * };
 * ```
 *
 * @module
 */
import type { UrlSummary } from "../../types.ts";
import type { LinkScores } from "../link_score.ts";
import type { PageRecord } from "../store.ts";
import type { Facts } from "./facts.ts";
import type { FailingUrls, HashList } from "./failing.ts";
import type { Redirects } from "./redirects.ts";
import type { BrokenTargets } from "./targets.ts";
import type { UrlNames } from "./url_names.ts";

/** What the records pass shares with its reducers: its inputs and what it keeps for later. */
export interface RecordsPass {
  readonly kv: Deno.Kv;
  readonly auditId: string;
  readonly f: Facts;
  readonly failing: FailingUrls;
  readonly linkScores: LinkScores;
  /** Internal redirects, by URL hash. */
  readonly redirects: Redirects;
  /** Failed fetches and error statuses that do not redirect, by URL hash. */
  readonly broken: BrokenTargets;
  /** URLs (hashes) whose failure another check charges (see failing.ts). */
  readonly markLater: HashList;
  /** The strings of the redirecting and failing URLs, in KV. */
  readonly names: UrlNames;
  /** The first fetched https URL (for the records sample). */
  firstHttps: UrlSummary | null;
  /** Failed fetches, a sample (for the records sample). */
  readonly failedSample: UrlSummary[];
}

/** One run's reducer. */
export interface Reduction {
  add(r: PageRecord): void;
  /** After each KV page of records (awaited before the next page is read). */
  endPage?(): Promise<void>;
  finish?(): void;
}

/** A reduction's registration on the records pass. */
export interface RecordReducer {
  readonly id: string;
  start(pass: RecordsPass): Reduction;
}
