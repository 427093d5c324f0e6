import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { Article, ARTICLE_OPERATIONS } from "../app/operations/articles.ts";
import { ArticleParam, publishArticleFor, PublishBody } from "../app/operator.ts";
import { operatorOf } from "./admin.ts";
import type { AppEnv, Services } from "./env.ts";
import { mountOperations } from "./operation_routes.ts";
import { responses } from "./openapi_helpers.ts";

/**
 * Endpoints 11–12, from the application layer's article operations, and the operator's publish
 * (not an agent's operation: admin token, undocumented; the use case is app/operator.ts's).
 */
export function articleRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  mountOperations(app, s, ARTICLE_OPERATIONS);

  app.openapi(
    createRoute({
      method: "post",
      path: "/admin/articles/{article_id}/publish",
      tags: ["Operator"],
      summary: "Publish a ready article of a subscribed project",
      hide: true,
      request: {
        params: ArticleParam,
        body: { content: { "application/json": { schema: PublishBody } }, required: false },
      },
      responses: responses(
        { 200: { description: "The published article", schema: Article } },
        ["unauthorized", "not_found", "invalid_state", "publish_not_allowed"],
      ),
    }),
    async (c) => {
      const article = await publishArticleFor(
        s,
        operatorOf(c, s),
        c.req.valid("param").article_id,
        c.req.valid("json") ?? {},
      );
      return c.json(article, 200);
    },
  );
}
