/**
 * Operator endpoints under `/admin`, guarded by ADMIN_TOKEN (`requireAdmin`, mounted in app.ts
 * before the body reader); absent (404) when it is unset. Each parses, calls one of the
 * operator's use cases (app/operator.ts) as the operator actor, and renders; hidden from the
 * OpenAPI document. The operator's article publish is the articles capability's route
 * (routes/articles.ts), over the same actor and app/operator.ts.
 *
 * @module
 */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { type OperatorActor, operatorActor } from "../app/actor.ts";
import { ApiKey } from "../app/operations/api_keys.ts";
import {
  AccountParam,
  GrantBody,
  grantCredits,
  GrantResponse,
  mintLiveKey,
  operatorHealth,
} from "../app/operator.ts";
import type { AppEnv, Services } from "./env.ts";
import { clientIp } from "./middleware/request_id.ts";
import { IdempotencyHeader, responses } from "./openapi_helpers.ts";

/** The operator of a request `requireAdmin` let through. */
export function operatorOf(c: Context<AppEnv>, s: Services): OperatorActor {
  return operatorActor(clientIp(c, s.deps.config));
}

/** The operator's routes (`/admin/*`). */
export function adminRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  app.openapi(
    createRoute({
      method: "post",
      path: "/admin/accounts/{account_id}/live-keys",
      tags: ["Operator"],
      summary: "Mint a live key after a human completed the upgrade",
      hide: true,
      request: { params: AccountParam },
      responses: responses(
        { 201: { description: "The live key, raw value shown once", schema: ApiKey } },
        ["unauthorized", "not_found", "key_limit_reached"],
      ),
    }),
    async (c) => {
      const key = await mintLiveKey(s, operatorOf(c, s), c.req.valid("param").account_id);
      return c.json(key, 201);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/admin/accounts/{account_id}/credits",
      tags: ["Operator"],
      summary: "Grant credits (support, goodwill, development), ledgered with the reason",
      hide: true,
      request: {
        params: AccountParam,
        headers: IdempotencyHeader,
        body: { content: { "application/json": { schema: GrantBody } }, required: true },
      },
      responses: responses(
        { 201: { description: "Granted; the new balance", schema: GrantResponse } },
        ["unauthorized", "not_found", "idempotency_conflict"],
      ),
    }),
    async (c) => {
      const { body, replayed } = await grantCredits(
        s,
        operatorOf(c, s),
        c.req.valid("param").account_id,
        c.req.valid("json"),
        c.req.header("idempotency-key"),
      );
      if (replayed) c.header("Idempotent-Replayed", "true");
      return c.json(body, 201);
    },
  );

  app.get("/admin/health", async (c) => {
    const health = await operatorHealth(s, operatorOf(c, s));
    return c.json(health, health.ok ? 200 : 503);
  });
}
