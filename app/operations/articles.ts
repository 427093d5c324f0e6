/**
 * Articles (endpoints 11–12): queue one draft article for a project, and read it.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { createArticle, getArticle } from "../../domain/articles/mod.ts";
import { articlePollSeconds, queueDepth } from "../jobs/poll_hint.ts";
import { defineOperation } from "../operation.ts";
import { articleView } from "../views.ts";
import { ProjectIdParam } from "./projects.ts";

const ArticleStatus = z.enum(["queued", "generating", "qa", "ready", "failed", "published"]);

const TokenUsage = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  calls: z.number().int().openapi({ description: "Model calls that answered, retries included" }),
}).openapi("TokenUsage");

const Generator = z.object({
  kind: z.enum(["model", "builtin_outline"]).openapi({
    description: "`model`: written by a language model. `builtin_outline`: the server has no " +
      "model configured; the built-in writer delivered an outline (a writer's brief with " +
      "editor's notes), not an article. It scores low in QA and is charged as `article_outline`.",
  }),
  model: z.string().optional().openapi({ description: "The model id, for `kind: model`" }),
  usage: TokenUsage.optional().openapi({
    description: "Tokens the model spent on this article (write and revision, retries " +
      "included); `kind: model` only",
  }),
}).openapi("ArticleGenerator");

const QaAssessment = z.object({
  id: z.string().openapi({ example: "not_an_outline" }),
  category: z.enum(["seo", "readability", "integrity"]),
  score: z.number().int().min(0).max(9).nullable().openapi({
    description: "0–9; null when the assessment did not apply",
  }),
  pass: z.boolean().nullable(),
  message: z.string(),
}).openapi("ArticleQaAssessment");

const Qa = z.object({
  capped_at: z.number().int().nullable().openapi({
    description: "The cap in force on qa_score (an outline, placeholders, another language...)",
  }),
  assessments: z.array(QaAssessment),
}).openapi("ArticleQa", {
  description: "The QA assessments behind qa_score (docs/writing.md): why it is what it is",
});

export const Article = z.object({
  article_id: z.string(),
  project_id: z.string(),
  status: ArticleStatus,
  title: z.string().optional(),
  meta_description: z.string().optional(),
  content_markdown: z.string().optional().openapi({ description: "Draft markdown" }),
  word_count: z.number().int().optional(),
  qa_score: z.number().int().min(0).max(100).optional(),
  qa: Qa.optional(),
  generator: Generator.optional().openapi({
    description: "How the article was written; present once generation has ended (ready, " +
      "published, and failed articles that reached a model)",
  }),
  language: z.string().optional(),
  watermark: z.object({ sandbox: z.boolean(), note: z.string() }).optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  slug: z.string().optional(),
  url: z.string().optional(),
  published_at: z.string().optional(),
}).openapi("Article");

export const CreateArticleBody = z.object({
  topic: z.string().trim().min(3).max(180).optional().openapi({
    example: "How to choose running shoes for flat feet",
  }),
  primary_keyword: z.string().trim().min(2).max(120).optional().openapi({
    example: "running shoes for flat feet",
  }),
}).strict().refine((b) => b.topic !== undefined || b.primary_keyword !== undefined, {
  message: "at least one of topic and primary_keyword is required",
  path: ["topic"],
}).openapi("CreateArticleRequest");

export const ArticleAccepted = z.object({
  article_id: z.string(),
  status: z.literal("queued"),
  poll: z.string().openapi({ example: "/v1/articles/art_0abc" }),
  poll_after_seconds: z.number().int().openapi({
    description: "When to poll first, estimated from the job's size and the jobs queued ahead " +
      "(2 to 60 s; also the Retry-After header)",
    example: 2,
  }),
}).openapi("ArticleAccepted");

export const ArticleIdParam = z.object({
  articleId: z.string().min(1).max(100).openapi({
    param: { name: "articleId", in: "path" },
  }),
});

export const startArticleOp = defineOperation({
  id: "articles.start",
  method: "post",
  path: "/v1/projects/{projectId}/articles",
  tags: ["Articles"],
  summary: "Generate one draft article (202); poll after poll_after_seconds (Retry-After).",
  access: "key",
  tokens: "allow",
  sandbox: { limit: "2 articles in the trial" },
  leaves: "a draft article, kept with the project",
  params: ProjectIdParam,
  body: CreateArticleBody,
  status: 202,
  output: ArticleAccepted,
  outputDescription: "Accepted; poll the `poll` path",
  errors: [
    "not_found",
    "payment_required",
    "insufficient_credits",
    "sandbox_limit_reached",
    "article_in_progress",
    "idempotency_conflict",
    "payload_too_large",
  ],
  idempotent: true,
  machinePayable: true,
  // Sandbox usage moves (the Account shows it).
  changesAccount: true,
  async run({ params, body }, { services, actor }) {
    const article = await createArticle(services.deps, actor, params.projectId, {
      topic: body.topic,
      primaryKeyword: body.primary_keyword,
    });
    return {
      article_id: article.id,
      status: "queued" as const,
      poll: `/v1/articles/${article.id}`,
      poll_after_seconds: articlePollSeconds(services.deps, await queueDepth(services.deps)),
    };
  },
});

export const getArticleOp = defineOperation({
  id: "articles.get",
  method: "get",
  path: "/v1/articles/{articleId}",
  tags: ["Articles"],
  summary: "An article: status only while generating; draft content once ready",
  access: "key",
  tokens: "allow",
  params: ArticleIdParam,
  status: 200,
  output: Article,
  outputDescription: "The article",
  errors: ["not_found"],
  async run({ params }, { services, actor }) {
    const article = await getArticle(services.deps, actor.accountId, params.articleId, actor.mode);
    return articleView(article);
  },
});

/** The article operations, in the order the API reference lists them. */
export const ARTICLE_OPERATIONS = [startArticleOp, getArticleOp];
