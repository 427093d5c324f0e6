/**
 * Draft articles: created against a project, written by a job (domain/writing), read back and
 * published. The public face of the capability; the persisted shapes are in `types.ts`.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/mod.ts";
 * declare const deps: Deps, accountId: string;
 * import { getArticle } from "./mod.ts";
 * const article = await getArticle(deps, accountId, "art_123", "live");
 * ```
 *
 * @module
 */
export {
  ARTICLE_JOB,
  type ArticleGenerator,
  type ArticleRecord,
  createArticle,
  getArticle,
  publishArticle,
  runArticleJob,
  SANDBOX_WATERMARK_NOTE,
} from "./articles.ts";
export { type ArticlePreviewData, loadArticlePreview } from "./preview_data.ts";
