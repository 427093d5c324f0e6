import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { Article, ARTICLE_OPERATIONS } from "../app/operations/articles.ts";
import { articleView } from "../app/views.ts";
import { publishArticle } from "../domain/articles/articles.ts";
import { ApiError } from "../domain/platform/errors.ts";
import type { AppEnv, Services } from "./env.ts";
import { mountOperations } from "./operation_routes.ts";
import { responses } from "./openapi_helpers.ts";

/**
 * Endpoints 11–12, from the application layer's article operations, and the operator's publish
 * (not an agent's operation: admin token, undocumented).
 */
export function articleRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const { deps } = s;
  mountOperations(app, s, ARTICLE_OPERATIONS);

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
