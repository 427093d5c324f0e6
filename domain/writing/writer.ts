/**
 * The writing port: what every article writer (model-backed or built-in) accepts and returns.
 *
 * Kept free of HTTP, KV and any SDK so the job layer can swap writers and tests can fake them.
 */

/** One page the crawl knows about; the only internal-link targets a writer may use. */
export interface SitePage {
  url: string;
  title: string | null;
  h1: string | null;
  description: string | null;
}

/** What the project knows about its own site. Facts come from here, never from thin air. */
export interface SiteFacts {
  /** Bare host, e.g. `example.com`; links to it count as internal. */
  host: string;
  pages: SitePage[];
}

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

/** A finished (or revised) draft. `markdown` opens with `# {title}`. */
export interface Draft {
  title: string;
  metaDescription: string;
  markdown: string;
  /** Which generator made it: `builtin-template` or `model:<id>`; recorded for disclosure. */
  generator: string;
}

/** One failed QA assessment handed back to the writer on the single revision pass. */
export interface QaFeedback {
  id: string;
  message: string;
}

/** Produces and revises drafts. Implementations throw {@link WriterError} on failure. */
export interface Writer {
  /** Short stable name for logs, e.g. `builtin` or `model`. */
  readonly name: string;
  write(brief: ArticleBrief): Promise<Draft>;
  /** Called at most once per article, with the assessments that failed. */
  revise(brief: ArticleBrief, draft: Draft, feedback: QaFeedback[]): Promise<Draft>;
}

/** Stable failure codes; the job layer stores them on the failed article. */
export type WriterErrorCode =
  /** The model endpoint kept failing (429/5xx/timeouts past the retry budget, or a 4xx). */
  | "model_failed"
  /** The model answered, but not with the JSON shape asked for (also: truncated replies). */
  | "model_malformed"
  /** The draft stayed under the QA threshold after its one revision. */
  | "qa_failed"
  /** The brief itself cannot be written from (empty topic or keyword). */
  | "invalid_brief"
  /** Anything else a writer threw; wrapped so callers only ever see one error type. */
  | "writer_failed";

/** The one error type of the writing pipeline. */
export class WriterError extends Error {
  constructor(
    readonly code: WriterErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "WriterError";
  }
}

/** The marker that opens an editor's note (a markdown blockquote): a gap a person must fill. */
export const NOTE_MARKER = "✎";
