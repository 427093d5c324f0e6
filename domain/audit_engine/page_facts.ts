/**
 * The facts of one HTML page (`PageFacts`): the fact families on the one streaming
 * `htmlparser2` pass (facts/extract.ts, `extractPageFacts`), listed once in FACT_COLLECTORS, and
 * the page's facts as the sum of what they declare. Each family declares its facts, their
 * starting values and how it collects them in its own file (facts/*.ts, see facts/collector.ts),
 * so a new fact is written only there; a new family is one more line in the list below.
 *
 * @module
 */
import type { DocumentFacts } from "./facts/document.ts";
import { headFacts } from "./facts/head.ts";
import { headingFacts } from "./facts/headings.ts";
import { linkFacts } from "./facts/links.ts";
import { imageFacts } from "./facts/images.ts";
import { subresourceFacts } from "./facts/subresources.ts";
import { scriptFacts } from "./facts/scripts.ts";
import { formFacts } from "./facts/forms.ts";
import { pluginFacts } from "./facts/plugins.ts";
import { appRootFacts } from "./facts/app_root.ts";
import { fragmentFacts } from "./facts/fragments.ts";

export { siteKeyOf } from "./urls.ts";

/** Every fact family on the parse, in the order each tag's families run. */
export const FACT_COLLECTORS = [
  headFacts,
  headingFacts,
  linkFacts,
  imageFacts,
  subresourceFacts,
  scriptFacts,
  formFacts,
  pluginFacts,
  appRootFacts,
  fragmentFacts,
] as const;

/** The facts a family declares (its `init`'s result). */
type FactsOf<C> = C extends { init(): infer F } ? F : never;
/** `A | B` → `A & B` (a page has every family's facts). */
type AllOf<U> = (U extends unknown ? (u: U) => void : never) extends (all: infer I) => void ? I
  : never;
/** One object type instead of an intersection, for readable hovers and errors. */
type Flat<T> = { [K in keyof T]: T[K] };

/**
 * Everything the page-level checks and the site-level aggregation need from one HTML page: the
 * document's own facts and every registered family's (their `samples`, evidence kept per counter,
 * at most SAMPLE_CAP each, merged into one object). Stored as it is (crawl/reuse.ts).
 */
export type PageFacts = Flat<
  DocumentFacts & AllOf<FactsOf<(typeof FACT_COLLECTORS)[number]>>
>;

/** Distinct internal links kept per page by default (`CRAWL_MAX_LINKS_PER_PAGE`). */
export const MAX_LINKS_PER_PAGE = 1_000;
/** Distinct same-site resources kept per page by default (for broken_resources). */
export const MAX_RESOURCES_PER_PAGE = 500;
