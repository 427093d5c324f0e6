import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, Next } from "hono";
import { ApiError, describeIssue } from "../domain/platform/mod.ts";
import type { AppEnv, Services } from "./env.ts";
import { identify, requireAdmin } from "./middleware/auth.ts";
import { errorBody, errorHandler, notFoundHandler } from "./middleware/errors.ts";
import { jsonBody } from "./middleware/json_body.ts";
import { rateLimit } from "./middleware/rate_limit.ts";
import { requestId } from "./middleware/request_id.ts";
import { registerEventWebhooks, TAGS } from "./openapi_events.ts";
import { routePath } from "hono/route";
import { recordRequest, startTimer, telemetryOn } from "../telemetry/mod.ts";

/** A capability's route group, registering on the one app (capabilities.ts lists them all, in order). */
export type RouteGroup = (app: OpenAPIHono<AppEnv>, s: Services) => void;

/**
 * Builds the HTTP app: common middleware, the route groups it is given (in order: route order
 * matters for matching; `loadRouteGroups` in capabilities.ts is the one list), the OpenAPI
 * document, and one error renderer. Nothing here talks to KV directly; the routes call the domain.
 */
export function buildApp(s: Services, groups: RouteGroup[]): OpenAPIHono<AppEnv> {
  const baseUrl = s.deps.config.publicBaseUrl;
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        throw new ApiError("invalid_request", describeIssue(result.error.issues, "body"));
      }
    },
  });

  app.onError(errorHandler(baseUrl));
  // Request latency by route pattern, only when telemetry exports (absent otherwise: no cost).
  if (telemetryOn) {
    app.use("*", async function measure(c: Context<AppEnv>, next: Next) {
      const t0 = startTimer();
      await next();
      recordRequest(t0, c.req.method, routePath(c, -1), c.res.status);
    });
  }
  app.use("*", requestId());
  const whoIsCalling = identify(s);
  const limit = rateLimit(s);
  // Identification feeds the limiter (whose budget a request spends), so the two run as one
  // layer: a Hono dispatch level less on every request. (Signups spend their own budgets on top,
  // in the signup use case.)
  app.use("/v1/*", function identifyAndLimit(c: Context<AppEnv>, next: Next) {
    return whoIsCalling(c, async () => {
      await limit(c, next);
    });
  });
  // The operator token is checked before any body is read.
  app.use("/admin/*", requireAdmin(s));
  // Only requests that carry a body pay for the body reader; /webhooks/stripe reads its raw body.
  app.on(["POST", "PUT", "PATCH"], ["/v1/*", "/admin/*"], jsonBody(s.deps.config.bodyTimeoutMs));

  for (const group of groups) {
    group(app, s);
  }

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API key: `sk_sandbox_…` from signup, or `sk_live_…` after upgrade.",
  });
  registerEventWebhooks(app);
  app.doc31("/v1/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Serpwright API",
      version: "1.0.0",
      description:
        "SEO automation for agents: signup, projects, technical audits, draft articles, billing and webhooks. " +
        `The same capabilities are an MCP server at ${baseUrl}/mcp (Streamable HTTP, same Bearer keys and rules; see x-mcp).`,
    },
    // An extension field, outside /v1: where an MCP host connects and the registry entry.
    "x-mcp": {
      url: `${baseUrl}/mcp`,
      transport: "streamable-http",
      authorization: "Bearer <API_KEY>, as for /v1, or an OAuth 2.1 access token (RFC 9728 " +
        "metadata at /.well-known/oauth-protected-resource/mcp); /v1 takes API keys only",
      server_json: `${baseUrl}/server.json`,
      docs: `${baseUrl}/docs/agents#mcp`,
    },
    servers: [{ url: baseUrl }],
    tags: TAGS,
    externalDocs: { description: "Agent quickstart", url: `${baseUrl}/docs/agents` },
  });

  const routeTable = app.routes
    .filter((r) => r.method !== "ALL")
    .map((r) => ({ method: r.method, re: pathRegex(r.path) }));
  app.notFound((c) => {
    const allowed = [
      ...new Set(routeTable.filter((r) => r.re.test(c.req.path)).map((r) => r.method)),
    ];
    if (allowed.length > 0 && !allowed.includes(c.req.method)) {
      c.header("Allow", allowed.join(", "));
      const err = new ApiError(
        "method_not_allowed",
        `Method ${c.req.method} is not allowed on this path; allowed: ${allowed.join(", ")}`,
      );
      return c.json(errorBody(baseUrl, err), 405);
    }
    return notFoundHandler(baseUrl)(c);
  });
  return app;
}

function pathRegex(path: string): RegExp {
  const escaped = path.split("/").map((seg) =>
    seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  ).join("/");
  return new RegExp(`^${escaped}/?$`);
}
