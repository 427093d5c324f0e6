/**
 * Shared pieces of the docs tests: the served OpenAPI document, the app's own route table, and
 * the 20 endpoints of the interface.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { Parser } from "htmlparser2";
import { loadRouteGroups } from "../../capabilities.ts";
import { buildApp } from "../../routes/app.ts";
import type { AppEnv } from "../../routes/env.ts";
import type { TestApp } from "../helpers/app.ts";

/** The interface's 20-endpoint table (the public /v1 contract), in OpenAPI path syntax. */
export const INTERFACE_ENDPOINTS = [
  "POST /v1/accounts",
  "GET /v1/account",
  "POST /v1/api-keys",
  "GET /v1/api-keys",
  "DELETE /v1/api-keys/{id}",
  "POST /v1/projects",
  "GET /v1/projects",
  "GET /v1/projects/{projectId}",
  "POST /v1/projects/{projectId}/audits",
  "GET /v1/audits/{auditId}",
  "POST /v1/projects/{projectId}/articles",
  "GET /v1/articles/{articleId}",
  "GET /v1/plans",
  "POST /v1/subscriptions",
  "GET /v1/subscription",
  "GET /v1/credits",
  "POST /v1/credits/purchases",
  "GET /v1/webhooks",
  "POST /v1/webhooks",
  "DELETE /v1/webhooks/{id}",
] as const;

/** Endpoints added beyond the interface's table (additive; the 20 above do not change). */
export const ADDITIVE_ENDPOINTS = [
  "POST /v1/account/verify-email",
  "GET /v1/audits/{auditId}/issues",
  "GET /v1/audits/{auditId}/issues/{check}",
  "GET /v1/audits/{auditId}/pages",
  "GET /v1/audits/{auditId}/groups",
  "GET /v1/audits/{auditId}/fixes",
  "GET /v1/audits/{auditId}/fixes/redirects",
  "GET /v1/audits/{auditId}/summary.md",
  "PUT /v1/projects/{projectId}/schedule",
  "GET /v1/projects/{projectId}/schedule",
  "DELETE /v1/projects/{projectId}/schedule",
  "GET /v1/connected-apps",
  "DELETE /v1/connected-apps/{id}",
  "POST /v1/audits/{auditId}/issues/{check}/recheck",
  "GET /v1/rechecks/{recheckId}",
  "GET /v1/audits/{auditId}/report",
  "GET /v1/audits/{auditId}/report.pdf",
  "POST /v1/audits/{auditId}/shares",
  "GET /v1/audits/{auditId}/shares",
  "DELETE /v1/audits/{auditId}/shares/{shareId}",
  "POST /v1/articles/{articleId}/shares",
  "GET /v1/articles/{articleId}/shares",
  "DELETE /v1/articles/{articleId}/shares/{shareId}",
  "GET /v1/shares",
  "DELETE /v1/shares",
  "POST /v1/upgrades",
  "GET /v1/upgrades/{upgradeId}",
  "POST /v1/billing-portal",
] as const;

/** The public ones; every other interface endpoint needs a bearer key. */
export const PUBLIC_ENDPOINTS = new Set(["POST /v1/accounts", "GET /v1/plans"]);

/** Served but deliberately not an operation of the document: the document itself. */
export const UNDOCUMENTED_V1 = new Set(["GET /v1/openapi.json"]);

const HTTP_METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

// deno-lint-ignore no-explicit-any
export type OpenApiDoc = any;

export async function fetchDocument(app: TestApp): Promise<OpenApiDoc> {
  const res = await app.req("GET", "/v1/openapi.json");
  if (res.status !== 200) throw new Error(`openapi.json: ${res.status} ${res.text}`);
  return res.body;
}

/** "METHOD /path" for every operation of the document. */
export function documentOperations(doc: OpenApiDoc): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries<Record<string, unknown>>(doc.paths ?? {})) {
    for (const m of Object.keys(item)) {
      if (HTTP_METHODS.includes(m)) out.push(`${m.toUpperCase()} ${path}`);
    }
  }
  return out.sort();
}

/** A second app on the same services as the running one, the way main.ts builds it. */
export async function buildSameApp(app: TestApp): Promise<OpenAPIHono<AppEnv>> {
  return buildApp(app.service.services, await loadRouteGroups());
}

/**
 * "What the app serves under /v1": every route registered with a concrete method (not a
 * middleware registered for all methods) on a concrete path (no wildcard) under `/v1/`, in
 * OpenAPI path syntax (`:id` → `{id}`), each once.
 */
export function servedV1Operations(app: OpenAPIHono<AppEnv>): string[] {
  const ops = new Set<string>();
  for (const r of app.routes) {
    if (r.method === "ALL" || !r.path.startsWith("/v1/") || r.path.includes("*")) continue;
    const path = r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    ops.add(`${r.method} ${path}`);
  }
  return [...ops].sort();
}

/** Every `id` attribute of an HTML document. */
export function idsOf(html: string): string[] {
  const ids: string[] = [];
  const p = new Parser({
    onopentag(_name, attrs) {
      if (attrs.id !== undefined) ids.push(attrs.id);
    },
  });
  p.write(html);
  p.end();
  return ids;
}
