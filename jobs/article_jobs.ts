import { type ArticleGenerator, runArticleJob } from "../domain/articles/mod.ts";
import { resendExpiredJobs } from "../domain/jobs/mod.ts";
import type { Deps } from "../domain/platform/mod.ts";
import { createWriter, generateArticle } from "../domain/writing/mod.ts";
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
