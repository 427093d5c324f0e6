/**
 * The writing port: what every article writer (model-backed or built-in) accepts and returns.
 *
 * Kept free of HTTP, KV and any SDK so the job layer can swap writers and tests can fake them.
 */

import type {
  ArticleBrief,
  GeneratorInfo,
  GeneratorKind,
  SiteFacts,
  SitePage,
  TokenUsage,
} from "./types.ts";
export type { SitePage };

export type { GeneratorKind, SiteFacts };

export type { ArticleBrief, GeneratorInfo, TokenUsage };

export function emptyUsage(): TokenUsage {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, calls: 0 };
}

export function addUsage(a: TokenUsage, b: TokenUsage | undefined): TokenUsage {
  if (!b) return a;
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    calls: a.calls + b.calls,
  };
}

/** A finished (or revised) draft. `markdown` opens with `# {title}`. */
export interface Draft {
  title: string;
  metaDescription: string;
  markdown: string;
  generator: GeneratorInfo;
  /** Tokens this draft cost (this call of `write` or `revise` only); absent for the built-in writer. */
  usage?: TokenUsage;
}

/** Per-article options of one `write` or `revise` call. */
export interface WriteOptions {
  /** Aborted when the article's time budget runs out: the writer stops and throws. */
  signal?: AbortSignal;
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
  /**
   * What this writer produces. Only `model` drafts are held to the QA threshold; a
   * `builtin_outline` is returned as the outline it is, with its (low) score.
   */
  readonly kind: GeneratorKind;
  write(brief: ArticleBrief, options?: WriteOptions): Promise<Draft>;
  /** Called at most once per article, with the assessments that failed. */
  revise(
    brief: ArticleBrief,
    draft: Draft,
    feedback: QaFeedback[],
    options?: WriteOptions,
  ): Promise<Draft>;
}

/** Stable failure codes; the job layer stores them on the failed article. */
export type WriterErrorCode =
  /** The model endpoint kept failing (429/5xx/timeouts past the retry budget, or a 4xx). */
  | "model_failed"
  /** The whole generation ran past its time budget (kept under the job's lease) and was aborted. */
  | "generation_timeout"
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
