import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import {
  type ArticleRecord,
  createArticle,
  getArticle,
  publishArticle,
  SANDBOX_WATERMARK_NOTE,
} from "../domain/articles.ts";
import { iso } from "../domain/clock.ts";
import { ApiError } from "../domain/errors.ts";
import type { AppEnv, Services } from "./env.ts";
import { requireKey } from "./middleware/auth.ts";
import { idempotency } from "./middleware/idempotency.ts";
import { AUTH_ERRORS, bearerSecurity, IdempotencyHeader, responses } from "./openapi_helpers.ts";
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

export const Article = z.object({
  article_id: z.string(),
  project_id: z.string(),
  status: ArticleStatus,
  title: z.string().optional(),
  meta_description: z.string().optional(),
  content_markdown: z.string().optional().openapi({ description: "Draft markdown" }),
  word_count: z.number().int().optional(),
  qa_score: z.number().int().min(0).max(100).optional(),
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

const Accepted = z.object({
  article_id: z.string(),
  status: z.literal("queued"),
  poll: z.string().openapi({ example: "/v1/articles/art_0abc" }),
}).openapi("ArticleAccepted");

export function articleView(a: ArticleRecord) {
  const hasContent = a.status === "ready" || a.status === "published";
  return {
    article_id: a.id,
    project_id: a.projectId,
    status: a.status,
    ...(hasContent
      ? {
        title: a.title!,
        meta_description: a.metaDescription!,
        content_markdown: a.contentMarkdown!,
        word_count: a.wordCount!,
        qa_score: a.qaScore!,
        language: a.language,
      }
      : {}),
    ...generatorView(a),
    ...(a.sandbox ? { watermark: { sandbox: true, note: SANDBOX_WATERMARK_NOTE } } : {}),
    ...(a.status === "failed" && a.error ? { error: a.error } : {}),
    ...(a.status === "published"
      ? { slug: a.slug!, url: a.url!, published_at: iso(a.publishedAt)! }
      : {}),
  };
}

/** The `generator` field: the stored generator, with the model's token usage where there was one. */
function generatorView(a: ArticleRecord) {
  if (a.generator) {
    return {
      generator: {
        kind: a.generator.kind,
        ...(a.generator.model ? { model: a.generator.model } : {}),
        ...(a.usage ? { usage: { ...a.usage } } : {}),
      },
    };
  }
  // A failed article that spent tokens before it failed still says what it cost.
  if (a.status === "failed" && a.usage) {
    return { generator: { kind: "model" as const, usage: { ...a.usage } } };
  }
  return {};
}

export function articleRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const { deps } = s;

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/projects/{projectId}/articles",
      tags: ["Articles"],
      summary:
        "Generate one draft article (202). Typical completion 10-30 minutes; poll every 60 s.",
      security: bearerSecurity,
      middleware: [requireKey(), idempotency(s)] as const,
      request: {
        params: ProjectIdParam,
        headers: IdempotencyHeader,
        body: { content: { "application/json": { schema: CreateArticleBody } }, required: true },
      },
      responses: responses(
        { 202: { description: "Accepted; poll the `poll` path", schema: Accepted } },
        [
          ...AUTH_ERRORS,
          "not_found",
          "payment_required",
          "insufficient_credits",
          "sandbox_limit_reached",
          "article_in_progress",
          "idempotency_conflict",
          "payload_too_large",
        ],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const body = c.req.valid("json");
      const actor = { accountId: caller.account.id, mode: caller.key.mode };
      const article = await createArticle(deps, actor, c.req.valid("param").projectId, {
        topic: body.topic,
        primaryKeyword: body.primary_keyword,
      });
      s.resolver.invalidateAccount(caller.account.id);
      return c.json({
        article_id: article.id,
        status: "queued" as const,
        poll: `/v1/articles/${article.id}`,
      }, 202);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/articles/{articleId}",
      tags: ["Articles"],
      summary: "An article: status only while generating; draft content once ready",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      request: {
        params: z.object({
          articleId: z.string().min(1).max(100).openapi({
            param: { name: "articleId", in: "path" },
          }),
        }),
      },
      responses: responses(
        { 200: { description: "The article", schema: Article } },
        [...AUTH_ERRORS, "not_found"],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const article = await getArticle(
        deps,
        caller.account.id,
        c.req.valid("param").articleId,
        caller.key.mode,
      );
      return c.json(articleView(article), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/admin/articles/{article_id}/publish",
      tags: ["Operator"],
      summary: "Publish a ready article of a subscribed project",
      hide: true,
      request: {
        params: z.object({ article_id: z.string().min(1).max(100) }),
        body: {
          content: {
            "application/json": {
              schema: z.object({ url: z.string().url().max(2000).optional() }).strict(),
            },
          },
          required: false,
        },
      },
      responses: responses(
        { 200: { description: "The published article", schema: Article } },
        ["unauthorized", "not_found", "invalid_state", "publish_not_allowed"],
      ),
    }),
    async (c) => {
      const body = c.req.valid("json") ?? {};
      if (body.url && !/^https?:\/\//i.test(body.url)) {
        throw new ApiError("invalid_request", "url: must be an http(s) URL");
      }
      const article = await publishArticle(deps, c.req.valid("param").article_id, body);
      return c.json(articleView(article), 200);
    },
  );
}
