/**
 * Shapes of article writing that articles persist: the brief, the generator, token usage and the QA
 * report.
 *
 * A leaf: it imports only other capabilities' `types.ts`, so the key table (domain/platform/store.ts)
 * depends on no module with code.
 *
 * @module
 */

/** Everything a writer needs to produce one article. */
export interface ArticleBrief {
  /** Placed verbatim as the planned title. */
  topic: string;
  primaryKeyword: string;
  /** BCP 47 primary language subtag, e.g. `en`, `de`. */
  language: string;
  /** ISO 3166-1 alpha-2 country, e.g. `US`. */
  country: string;
  siteFacts: SiteFacts;
}

/** Which generator made a draft; recorded for disclosure and stored with the article. */
export interface GeneratorInfo {
  kind: GeneratorKind;
  /** The model id, for `kind: "model"`. */
  model?: string;
}

/** Tokens a model spent on one article, summed over every call (retries included). */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Chat-completion calls that answered (failed attempts without a usage block add nothing). */
  calls: number;
}

/** What an article shows of its QA (`qa` on the article resource): the cap and every assessment. */
export interface QaReport {
  /** The cap in force (an outline, placeholders, another language...), or null. */
  capped_at: number | null;
  assessments: {
    id: string;
    category: Category;
    /** 0–9, or null when the assessment did not apply. */
    score: number | null;
    pass: boolean | null;
    message: string;
  }[];
}

/** How a draft was written; stored on the article and shown as its `generator` field. */
export type GeneratorKind = "model" | "builtin_outline";

/** What the project knows about its own site. Facts come from here, never from thin air. */
export interface SiteFacts {
  /** Host as crawled, port included (`example.com`, `127.0.0.1:8080`); links to it are internal. */
  host: string;
  /**
   * Scheme, host and port of the site (`http://127.0.0.1:8080`): relative links resolve against
   * it. Defaults to `https://{host}`.
   */
  origin?: string;
  /** Pages the crawl fetched: the only URLs an article may link internally, scheme included. */
  pages: SitePage[];
}

export type Category = "seo" | "readability" | "integrity";

/** One page the crawl knows about; the only internal-link targets a writer may use. */
export interface SitePage {
  url: string;
  title: string | null;
  h1: string | null;
  description: string | null;
}
