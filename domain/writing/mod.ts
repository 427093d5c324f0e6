/**
 * Writing: generating an article from a brief, with the built-in writer or a model, and its
 * quality checks. The public face of the capability; the persisted shapes are in `types.ts`.
 *
 * @example
 * ```ts
 * import type { ArticleBrief } from "./mod.ts";
 * declare const brief: ArticleBrief;
 * import { createWriter, generateArticle } from "./mod.ts";
 * const writer = createWriter({}); // no API key: the offline built-in writer
 * const article = await generateArticle({ brief, writer });
 * ```
 *
 * @module
 */
export {
  type ArticleStage,
  createWriter,
  generateArticle,
  type GeneratedArticle,
} from "./generate_article.ts";
export type { ArticleBrief, TokenUsage } from "./writer.ts";
