import type { ArticleGenerator } from "../domain/articles/articles.ts";
import { runArticleJob } from "../domain/articles/articles.ts";
import { resendExpiredJobs } from "../domain/jobs/leases.ts";
import type { Deps } from "../domain/platform/deps.ts";
import { createWriter, generateArticle } from "../domain/writing/generate_article.ts";
import type { JobHandlers } from "./dispatcher.ts";

/** The writing pipeline with the configured writer: the model when OPENAI_API_KEY is set. */
export function articleGenerator(deps: Deps): ArticleGenerator {
  const { openai } = deps.config;
  const writer = createWriter({
    openaiApiKey: openai.apiKey ?? undefined,
    openaiBaseUrl: openai.baseUrl ?? undefined,
    openaiModel: openai.model,
  });
  return (brief, onStage, { signal }) => generateArticle({ brief, writer, onStage, signal });
}

export function articleJobs(deps: Deps): JobHandlers {
  const generate = articleGenerator(deps);
  return { article: (id) => runArticleJob(deps, id, generate) };
}

export async function articleMaintenance(deps: Deps): Promise<void> {
  await resendExpiredJobs(deps, "article");
}
