/**
 * What an article's preview shows, read for one caller (a key's account and mode, or a share
 * link's): the finished draft and the project it was written for (whose URL the draft's relative
 * links resolve against).
 *
 * @module
 */
import { type ArticleRecord, getArticle } from "./articles.ts";
import type { Caller } from "../audits/mod.ts";
import { ApiError, type Deps, keys, read } from "../platform/mod.ts";

export interface ArticlePreviewData {
  article: ArticleRecord;
  project: { id: string; name: string; url: string } | null;
}

/** A ready (or published) article of the caller's, or 404 / 409 while it is not written yet. */
export async function loadArticlePreview(
  deps: Deps,
  caller: Caller,
  articleId: string,
): Promise<ArticlePreviewData> {
  const article = await getArticle(deps, caller.accountId, articleId, caller.mode);
  if (article.status !== "ready" && article.status !== "published") {
    throw new ApiError(
      "invalid_state",
      `Article '${articleId}' is ${article.status}; its preview exists once it is ready`,
    );
  }
  const project = (await read(deps.kv, keys.project(article.accountId, article.projectId))).value;
  return {
    article,
    project: project ? { id: project.id, name: project.name, url: project.url } : null,
  };
}
