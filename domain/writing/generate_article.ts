/**
 * The article pipeline the job layer calls: write → QA → (revise once) → result or WriterError.
 *
 * Free of HTTP and KV: the caller persists stages through `onStage` and stores the result.
 */

import {
  addUsage,
  type ArticleBrief,
  emptyUsage,
  type GeneratorInfo,
  type TokenUsage,
  type Writer,
  WriterError,
} from "./writer.ts";
import {
  DEFAULT_QA_THRESHOLD,
  feedbackFrom,
  type QaReport,
  qaReport,
  type QaResult,
  scoreArticle,
} from "./qa.ts";
import { countWords } from "./markdown_text.ts";
import { createBuiltinWriter } from "./builtin_writer.ts";
import { createModelWriter } from "./model_writer.ts";

export interface GeneratedArticle {
  title: string;
  meta_description: string;
  content_markdown: string;
  /** Words of the visible markdown text, title heading and editor's notes included. */
  word_count: number;
  qa_score: number;
  /** The QA assessments behind `qa_score` (the cap in force and why). */
  qa: QaReport;
  /** True when the first draft fell under the threshold and the revision passed. */
  revised: boolean;
  /** How the article was written: a model (which one) or the built-in outline. */
  generator: GeneratorInfo;
  /** Tokens the model spent on this article, write and revision together; absent without a model. */
  usage?: TokenUsage;
}

export type ArticleStage = "generating" | "qa";

/**
 * Generates one article. A model draft under `qaThreshold` is revised once with the failed
 * assessments as feedback; if the revision is still under it, this throws
 * `WriterError("qa_failed")`. A built-in outline is returned as it is, with its (low) score: it
 * cannot be revised into an article, and `generator.kind` tells the caller what it got.
 *
 * `signal` bounds the whole generation: when it aborts, the writer stops its calls and this
 * throws `WriterError("generation_timeout")`.
 */
export async function generateArticle(input: {
  brief: ArticleBrief;
  writer: Writer;
  qaThreshold?: number;
  signal?: AbortSignal;
  onStage?: (stage: ArticleStage) => Promise<void>;
}): Promise<GeneratedArticle> {
  const { brief, writer, signal } = input;
  const threshold = input.qaThreshold ?? DEFAULT_QA_THRESHOLD;
  if (!brief.topic.trim() || !brief.primaryKeyword.trim()) {
    throw new WriterError("invalid_brief", "The brief needs a topic and a primary keyword.");
  }
  await input.onStage?.("generating");
  let usage = emptyUsage();
  let draft = await guard(() => writer.write(brief, { signal }), signal);
  usage = addUsage(usage, draft.usage);
  await input.onStage?.("qa");
  let qa: QaResult = scoreArticle(draft, brief);
  let revised = false;
  if (writer.kind === "model" && qa.score < threshold) {
    const feedback = feedbackFrom(qa);
    const first = draft;
    draft = await guard(() => writer.revise(brief, first, feedback, { signal }), signal, usage);
    usage = addUsage(usage, draft.usage);
    qa = scoreArticle(draft, brief);
    revised = true;
    if (qa.score < threshold) {
      const failed = feedbackFrom(qa);
      throw new WriterError(
        "qa_failed",
        `The article scored ${qa.score} after one revision (threshold ${threshold}). ` +
          `Failed: ${failed.map((f) => f.id).join(", ") || "none"}.`,
        { qa_score: qa.score, threshold, failed, usage },
      );
    }
  }
  return {
    title: draft.title,
    meta_description: draft.metaDescription,
    content_markdown: draft.markdown,
    word_count: countWords(draft.markdown),
    qa_score: qa.score,
    qa: qaReport(qa),
    revised,
    generator: draft.generator,
    ...(writer.kind === "model" ? { usage } : {}),
  };
}

/**
 * Lets only WriterError out, so the job layer branches on one type; an abort of the budget is
 * `generation_timeout` whatever the writer threw. Usage spent before this step rides along.
 */
async function guard<T>(
  fn: () => Promise<T>,
  signal?: AbortSignal,
  before?: TokenUsage,
): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const spent = (w: WriterError) =>
      before ? addUsage(before, w.details?.usage as TokenUsage | undefined) : w.details?.usage;
    if (signal?.aborted) {
      const prior = e instanceof WriterError ? spent(e) : before;
      throw new WriterError(
        "generation_timeout",
        "The article ran out of its time budget and was aborted.",
        prior ? { usage: prior } : undefined,
        { cause: e },
      );
    }
    if (e instanceof WriterError) {
      if (!before) throw e;
      throw new WriterError(e.code, e.message, { ...e.details, usage: spent(e) }, { cause: e });
    }
    throw new WriterError("writer_failed", `The writer failed: ${String(e)}`, undefined, {
      cause: e,
    });
  }
}

export interface WriterConfig {
  openaiApiKey?: string;
  openaiBaseUrl?: string;
  openaiModel?: string;
  timeoutMs?: number;
  maxRetries?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** The model writer when an API key is configured, otherwise the offline built-in writer. */
export function createWriter(config: WriterConfig): Writer {
  if (config.openaiApiKey) {
    return createModelWriter({
      apiKey: config.openaiApiKey,
      baseURL: config.openaiBaseUrl,
      model: config.openaiModel,
      timeoutMs: config.timeoutMs,
      maxRetries: config.maxRetries,
      sleep: config.sleep,
    });
  }
  return createBuiltinWriter();
}

export { WriterError } from "./writer.ts";
export type { ArticleBrief, Draft, QaFeedback, Writer } from "./writer.ts";
