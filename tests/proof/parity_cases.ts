/**
 * The cases the parity proof runs: each operation at least once through both adapters, with
 * the failure a caller meets most (not_found for a foreign or invisible id, a refused limit).
 */
import { newId } from "../../domain/platform/ids.ts";
import { hashKey } from "../../domain/identity/key_hash.ts";
import type { GrantRecord } from "../../domain/identity/oauth/types.ts";
import type { UpgradeRecord } from "../../domain/upgrades/types.ts";
import { keys } from "../../kv/keys.ts";
import type { TestApp } from "../helpers/app.ts";
import { seedCompletedAudit } from "../helpers/seed_audit.ts";

/** A grant (connected app) as the token endpoint stores it, approved by `key`. */
async function storeGrant(app: TestApp, accountId: string, key: string): Promise<string> {
  const now = app.clock.now();
  const hash = hashKey(key);
  const keyRecord = (await app.kv.get<{ id: string }>(keys.apiKey(hash))).value!;
  const grant: GrantRecord = {
    id: "app_0parity0000000000000000",
    accountId,
    mode: key.startsWith("sk_live_") ? "live" : "sandbox",
    keyId: keyRecord.id,
    keyHash: hash,
    clientId: "https://host.example/client.json",
    clientName: "Parity Host",
    redirectUri: "https://host.example/callback",
    scope: "mcp",
    resource: "http://localhost:8000/mcp",
    createdAt: now,
    refreshedAt: now,
    expiresAt: now + 30 * 86_400_000,
    refreshHash: "0".repeat(64),
    revokedAt: null,
    revokedReason: null,
  };
  await app.kv.set(keys.oauthGrant(accountId, grant.id), grant);
  return grant.id;
}

export interface World {
  sandbox: { key: string; accountId: string };
  live: { key: string; accountId: string };
  sandboxProjectId: string;
  liveProjectId: string;
  /** Every account the world holds (their cached keys are dropped between runs). */
  accounts: string[];
  /** A connected app's OAuth access token for each of the two keys, by key. */
  tokens: Record<string, string>;
  /** Resources a case's setup adds for later cases. */
  extra: Record<string, string>;
}

export interface ParityCase {
  /** The operation id (app/operations). */
  op: string;
  name: string;
  /** The REST success status the case expects when it succeeds. */
  status?: number;
  /** Whether the operation must change the store (checked on the REST run). */
  changes?: boolean;
  setup?(app: TestApp, world: World): Promise<void>;
  rest(world: World): { method: string; path: string; key?: string; body?: unknown };
  mcp(world: World): { key: string | null; tool: string; args: Record<string, unknown> };
}

export const parityCases: ParityCase[] = [
  {
    op: "accounts.create",
    name: "signup",
    status: 201,
    changes: true,
    rest: () => ({ method: "POST", path: "/v1/accounts", body: { email: "parity@example.com" } }),
    mcp: () => ({ key: null, tool: "signup", args: { email: "parity@example.com" } }),
  },
  {
    op: "accounts.create",
    name: "a registered email",
    changes: false,
    rest: () => ({ method: "POST", path: "/v1/accounts", body: { email: "taken@example.com" } }),
    mcp: () => ({ key: null, tool: "signup", args: { email: "taken@example.com" } }),
  },
  {
    op: "accounts.get",
    name: "sandbox account",
    status: 200,
    changes: false,
    rest: (w) => ({ method: "GET", path: "/v1/account", key: w.sandbox.key }),
    mcp: (w) => ({ key: w.sandbox.key, tool: "account", args: {} }),
  },
  {
    op: "accounts.verify_email",
    name: "a sandbox key asks for a verification link",
    status: 202,
    changes: true,
    rest: (w) => ({
      method: "POST",
      path: "/v1/account/verify-email",
      key: w.sandbox.key,
      body: {},
    }),
    mcp: (w) => ({ key: w.sandbox.key, tool: "account", args: { action: "verify_email" } }),
  },
  {
    op: "api_keys.create",
    name: "live key mints a key",
    status: 201,
    changes: true,
    rest: (w) => ({ method: "POST", path: "/v1/api-keys", key: w.live.key, body: { name: "ci" } }),
    mcp: (w) => ({ key: w.live.key, tool: "api_keys", args: { action: "create", name: "ci" } }),
  },
  {
    op: "api_keys.list",
    name: "sandbox key lists sandbox keys",
    status: 200,
    changes: false,
    rest: (w) => ({ method: "GET", path: "/v1/api-keys", key: w.sandbox.key }),
    mcp: (w) => ({ key: w.sandbox.key, tool: "api_keys", args: { action: "list" } }),
  },
  {
    op: "api_keys.revoke",
    name: "revoke another key",
    status: 200,
    changes: true,
    rest: (w) => ({ method: "DELETE", path: `/v1/api-keys/${w.extra.keyId}`, key: w.live.key }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "api_keys",
      args: { action: "revoke", key_id: w.extra.keyId },
    }),
  },
  {
    op: "api_keys.revoke",
    name: "a live key is invisible to a sandbox key",
    changes: false,
    rest: (w) => ({ method: "DELETE", path: `/v1/api-keys/${w.extra.keyId}`, key: w.sandbox.key }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "api_keys",
      args: { action: "revoke", key_id: w.extra.keyId },
    }),
  },
  {
    op: "connected_apps.list",
    name: "live key lists the apps it approved",
    status: 200,
    changes: false,
    async setup(app, w) {
      if (w.extra.appId) return;
      w.extra.appId = await storeGrant(app, w.live.accountId, w.live.key);
    },
    rest: (w) => ({ method: "GET", path: "/v1/connected-apps", key: w.live.key }),
    mcp: (w) => ({ key: w.live.key, tool: "api_keys", args: { action: "list_apps" } }),
  },
  {
    op: "connected_apps.revoke",
    name: "revoke an app",
    status: 200,
    changes: true,
    rest: (w) => ({
      method: "DELETE",
      path: `/v1/connected-apps/${w.extra.appId}`,
      key: w.live.key,
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "api_keys",
      args: { action: "revoke_app", app_id: w.extra.appId },
    }),
  },
  {
    op: "connected_apps.revoke",
    name: "another account's app is not_found",
    changes: false,
    rest: (w) => ({
      method: "DELETE",
      path: `/v1/connected-apps/${w.extra.appId}`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "api_keys",
      args: { action: "revoke_app", app_id: w.extra.appId },
    }),
  },
  {
    op: "audits.start",
    name: "live key, paid with credits",
    status: 202,
    changes: true,
    rest: (w) => ({
      method: "POST",
      path: `/v1/projects/${w.liveProjectId}/audits`,
      key: w.live.key,
      body: {},
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "audits",
      args: { action: "start", project_id: w.liveProjectId },
    }),
  },
  {
    op: "audits.start",
    name: "with audit options (scope, list-mode URLs canonicalised, a User-Agent preset)",
    status: 202,
    changes: true,
    rest: (w) => ({
      method: "POST",
      path: `/v1/projects/${w.liveProjectId}/audits`,
      key: w.live.key,
      body: {
        urls: ["https://live.example.com/pricing#plans", "https://www.live.example.com/blog"],
        user_agent: "googlebot_smartphone",
      },
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "audits",
      args: {
        action: "start",
        project_id: w.liveProjectId,
        urls: ["https://live.example.com/pricing#plans", "https://www.live.example.com/blog"],
        user_agent: "googlebot_smartphone",
      },
    }),
  },
  {
    op: "audits.start",
    name: "a listed URL off the project's site is invalid_request naming urls.0",
    changes: false,
    rest: (w) => ({
      method: "POST",
      path: `/v1/projects/${w.liveProjectId}/audits`,
      key: w.live.key,
      body: { urls: ["https://elsewhere.example.com/"] },
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "audits",
      args: {
        action: "start",
        project_id: w.liveProjectId,
        urls: ["https://elsewhere.example.com/"],
      },
    }),
  },
  {
    op: "audits.start",
    name: "a bad path pattern is invalid_request naming exclude.0",
    changes: false,
    rest: (w) => ({
      method: "POST",
      path: `/v1/projects/${w.liveProjectId}/audits`,
      key: w.live.key,
      body: { exclude: ["blog/**"] },
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "audits",
      args: { action: "start", project_id: w.liveProjectId, exclude: ["blog/**"] },
    }),
  },
  {
    op: "audits.start",
    name: "a live project is not_found to a sandbox key, before funding",
    changes: false,
    rest: (w) => ({
      method: "POST",
      path: `/v1/projects/${w.liveProjectId}/audits`,
      key: w.sandbox.key,
      body: {},
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "start", project_id: w.liveProjectId },
    }),
  },
  {
    op: "audits.get",
    name: "the queued sandbox audit",
    status: 200,
    changes: false,
    async setup(app, w) {
      if (w.extra.auditId) return;
      const res = await app.req("POST", `/v1/projects/${w.sandboxProjectId}/audits`, {
        key: w.sandbox.key,
        body: {},
      });
      if (res.status !== 202) throw new Error(`audit setup: ${res.status} ${res.text}`);
      w.extra.auditId = res.body.audit_id;
    },
    rest: (w) => ({ method: "GET", path: `/v1/audits/${w.extra.auditId}`, key: w.sandbox.key }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "get", audit_id: w.extra.auditId },
    }),
  },
  {
    op: "audits.summary",
    name: "the summary of an audit still queued",
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.auditId}/summary.md`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "summary", audit_id: w.extra.auditId },
    }),
  },
  {
    op: "audits.summary",
    name: "the Markdown summary of a completed audit",
    status: 200,
    changes: false,
    async setup(app, w) {
      w.extra.completedAuditId = "aud_paritycompleted0001";
      await seedCompletedAudit(app.kv, {
        accountId: w.sandbox.accountId,
        projectId: w.sandboxProjectId,
        auditId: w.extra.completedAuditId,
        pages: 30,
      });
    },
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.completedAuditId}/summary.md`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "summary", audit_id: w.extra.completedAuditId },
    }),
  },
  {
    op: "audits.summary",
    name: "the summary of another account's audit",
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.completedAuditId}/summary.md`,
      key: w.live.key,
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "audits",
      args: { action: "summary", audit_id: w.extra.completedAuditId },
    }),
  },
  {
    op: "audits.issues",
    name: "issues of a completed audit",
    status: 200,
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.completedAuditId}/issues`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "issues", audit_id: w.extra.completedAuditId },
    }),
  },
  {
    op: "audits.issues",
    name: "issues of an audit still queued",
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.auditId}/issues`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "issues", audit_id: w.extra.auditId },
    }),
  },
  {
    op: "audits.issue",
    name: "one check of another account's audit",
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.auditId}/issues/broken_internal_links`,
      key: w.live.key,
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "audits",
      args: { action: "issue", audit_id: w.extra.auditId, check: "broken_internal_links" },
    }),
  },
  {
    op: "audits.pages",
    name: "pages of an audit still queued",
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.auditId}/pages`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "pages", audit_id: w.extra.auditId },
    }),
  },
  {
    op: "audits.groups",
    name: "page groups of a completed audit",
    status: 200,
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.completedAuditId}/groups`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "groups", audit_id: w.extra.completedAuditId },
    }),
  },
  {
    op: "audits.fixes",
    name: "fixes of an audit still queued",
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.auditId}/fixes`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "fixes", audit_id: w.extra.auditId },
    }),
  },
  {
    op: "audits.redirects",
    name: "the redirect map of another account's audit",
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.completedAuditId}/fixes/redirects`,
      key: w.live.key,
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "audits",
      args: { action: "redirects", audit_id: w.extra.completedAuditId },
    }),
  },
  {
    op: "rechecks.start",
    name: "live key re-checks a completed audit's title_missing, paid with credits",
    status: 202,
    changes: true,
    setup: completedLiveAudit,
    rest: (w) => ({
      method: "POST",
      path: `/v1/audits/${w.extra.doneAuditId}/issues/title_missing/recheck`,
      key: w.live.key,
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "audits",
      args: { action: "recheck", audit_id: w.extra.doneAuditId, check: "title_missing" },
    }),
  },
  {
    op: "rechecks.start",
    name: "a site-wide check is refused",
    changes: false,
    setup: completedLiveAudit,
    rest: (w) => ({
      method: "POST",
      path: `/v1/audits/${w.extra.doneAuditId}/issues/sitemap_missing/recheck`,
      key: w.live.key,
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "audits",
      args: { action: "recheck", audit_id: w.extra.doneAuditId, check: "sitemap_missing" },
    }),
  },
  {
    op: "rechecks.start",
    name: "a live audit is not_found to a sandbox key",
    changes: false,
    setup: completedLiveAudit,
    rest: (w) => ({
      method: "POST",
      path: `/v1/audits/${w.extra.doneAuditId}/issues/title_missing/recheck`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "recheck", audit_id: w.extra.doneAuditId, check: "title_missing" },
    }),
  },
  {
    op: "rechecks.get",
    name: "the queued re-check",
    status: 200,
    changes: false,
    async setup(app, w) {
      await completedLiveAudit(app, w);
      if (w.extra.recheckId) return;
      const res = await app.req(
        "POST",
        `/v1/audits/${w.extra.doneAuditId}/issues/title_missing/recheck`,
        { key: w.live.key },
      );
      if (res.status !== 202) throw new Error(`recheck setup: ${res.status} ${res.text}`);
      w.extra.recheckId = res.body.recheck_id;
    },
    rest: (w) => ({ method: "GET", path: `/v1/rechecks/${w.extra.recheckId}`, key: w.live.key }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "audits",
      args: { action: "recheck_get", recheck_id: w.extra.recheckId },
    }),
  },
  {
    op: "rechecks.get",
    name: "another account's re-check is not_found",
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/rechecks/${w.extra.recheckId}`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "recheck_get", recheck_id: w.extra.recheckId },
    }),
  },
  {
    op: "articles.start",
    name: "live key, paid with credits",
    status: 202,
    changes: true,
    rest: (w) => ({
      method: "POST",
      path: `/v1/projects/${w.liveProjectId}/articles`,
      key: w.live.key,
      body: { topic: "How agents audit sites" },
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "articles",
      args: { action: "start", project_id: w.liveProjectId, topic: "How agents audit sites" },
    }),
  },
  {
    op: "articles.start",
    name: "a live project is not_found to a sandbox key",
    changes: false,
    rest: (w) => ({
      method: "POST",
      path: `/v1/projects/${w.liveProjectId}/articles`,
      key: w.sandbox.key,
      body: { topic: "How agents audit sites" },
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "articles",
      args: { action: "start", project_id: w.liveProjectId, topic: "How agents audit sites" },
    }),
  },
  {
    op: "articles.get",
    name: "the generating sandbox article",
    status: 200,
    changes: false,
    async setup(app, w) {
      if (w.extra.articleId) return;
      const res = await app.req("POST", `/v1/projects/${w.sandboxProjectId}/articles`, {
        key: w.sandbox.key,
        body: { topic: "Sandbox article" },
      });
      if (res.status !== 202) throw new Error(`article setup: ${res.status} ${res.text}`);
      w.extra.articleId = res.body.article_id;
    },
    rest: (w) => ({ method: "GET", path: `/v1/articles/${w.extra.articleId}`, key: w.sandbox.key }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "articles",
      args: { action: "get", article_id: w.extra.articleId },
    }),
  },
  {
    op: "audits.report",
    name: "report of an audit still queued",
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.auditId}/report`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "report", audit_id: w.extra.auditId },
    }),
  },
  {
    op: "audits.report",
    name: "report of another account's audit",
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.auditId}/report?status=4xx`,
      key: w.live.key,
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "audits",
      args: { action: "report", audit_id: w.extra.auditId, status: "4xx" },
    }),
  },
  {
    op: "audits.report_pdf",
    name: "PDF of an audit still queued",
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.auditId}/report.pdf`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "report_pdf", audit_id: w.extra.auditId },
    }),
  },
  {
    op: "audits.report_pdf",
    name: "PDF of another account's audit",
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.auditId}/report.pdf`,
      key: w.live.key,
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "audits",
      args: { action: "report_pdf", audit_id: w.extra.auditId },
    }),
  },
  {
    op: "audit_shares.create",
    name: "an audit still queued is not shared",
    changes: false,
    rest: (w) => ({
      method: "POST",
      path: `/v1/audits/${w.extra.auditId}/shares`,
      key: w.sandbox.key,
      body: {},
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "share", audit_id: w.extra.auditId },
    }),
  },
  {
    op: "audit_shares.create",
    name: "a completed sandbox audit, 7 days",
    status: 201,
    changes: true,
    async setup(app, w) {
      if (w.extra.sharedAuditId) return;
      w.extra.sharedAuditId = await completedAudit(app, w.sandbox.accountId, w.sandboxProjectId);
    },
    rest: (w) => ({
      method: "POST",
      path: `/v1/audits/${w.extra.sharedAuditId}/shares`,
      key: w.sandbox.key,
      body: { expires_in_days: 7 },
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "share", audit_id: w.extra.sharedAuditId, expires_in_days: 7 },
    }),
  },
  {
    op: "audit_shares.list",
    name: "the links of a completed audit",
    status: 200,
    changes: false,
    async setup(app, w) {
      if (w.extra.shareId) return;
      const res = await app.req("POST", `/v1/audits/${w.extra.sharedAuditId}/shares`, {
        key: w.sandbox.key,
        body: {},
      });
      if (res.status !== 201) throw new Error(`share setup: ${res.status} ${res.text}`);
      w.extra.shareId = res.body.share_id;
    },
    rest: (w) => ({
      method: "GET",
      path: `/v1/audits/${w.extra.sharedAuditId}/shares`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "shares", audit_id: w.extra.sharedAuditId },
    }),
  },
  {
    op: "audit_shares.revoke",
    name: "revoke a link",
    status: 200,
    changes: true,
    rest: (w) => ({
      method: "DELETE",
      path: `/v1/audits/${w.extra.sharedAuditId}/shares/${w.extra.shareId}`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "audits",
      args: { action: "revoke_share", audit_id: w.extra.sharedAuditId, share_id: w.extra.shareId },
    }),
  },
  {
    op: "audit_shares.revoke",
    name: "a link of another account's audit",
    changes: false,
    rest: (w) => ({
      method: "DELETE",
      path: `/v1/audits/${w.extra.sharedAuditId}/shares/${w.extra.shareId}`,
      key: w.live.key,
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "audits",
      args: { action: "revoke_share", audit_id: w.extra.sharedAuditId, share_id: w.extra.shareId },
    }),
  },
  {
    op: "article_shares.create",
    name: "an article still generating is not shared",
    changes: false,
    rest: (w) => ({
      method: "POST",
      path: `/v1/articles/${w.extra.articleId}/shares`,
      key: w.sandbox.key,
      body: { expires_in_days: 3 },
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "articles",
      args: { action: "share", article_id: w.extra.articleId, expires_in_days: 3 },
    }),
  },
  {
    op: "article_shares.create",
    name: "more than 90 days is refused",
    changes: false,
    rest: (w) => ({
      method: "POST",
      path: `/v1/articles/${w.extra.articleId}/shares`,
      key: w.sandbox.key,
      body: { expires_in_days: 91 },
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "articles",
      args: { action: "share", article_id: w.extra.articleId, expires_in_days: 91 },
    }),
  },
  {
    op: "article_shares.list",
    name: "no links yet",
    status: 200,
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/articles/${w.extra.articleId}/shares`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "articles",
      args: { action: "shares", article_id: w.extra.articleId },
    }),
  },
  {
    op: "article_shares.revoke",
    name: "an unknown link",
    changes: false,
    rest: (w) => ({
      method: "DELETE",
      path: `/v1/articles/${w.extra.articleId}/shares/shr_unknown`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "articles",
      args: { action: "revoke_share", article_id: w.extra.articleId, share_id: "shr_unknown" },
    }),
  },
  {
    op: "shares.list",
    name: "the account's live links, one a page",
    status: 200,
    changes: false,
    rest: (w) => ({ method: "GET", path: "/v1/shares?limit=1", key: w.sandbox.key }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "api_keys",
      args: { action: "list_shares", limit: 1 },
    }),
  },
  {
    op: "shares.list",
    name: "a live key's account without links",
    status: 200,
    changes: false,
    rest: (w) => ({ method: "GET", path: "/v1/shares", key: w.live.key }),
    mcp: (w) => ({ key: w.live.key, tool: "api_keys", args: { action: "list_shares" } }),
  },
  {
    op: "shares.end_all",
    name: "end every live link of the account",
    status: 200,
    changes: true,
    rest: (w) => ({ method: "DELETE", path: "/v1/shares", key: w.sandbox.key }),
    mcp: (w) => ({ key: w.sandbox.key, tool: "api_keys", args: { action: "end_shares" } }),
  },
  {
    op: "schedules.set",
    name: "weekly on the live project",
    status: 201,
    changes: true,
    rest: (w) => ({
      method: "PUT",
      path: `/v1/projects/${w.liveProjectId}/schedule`,
      key: w.live.key,
      body: { cadence: "weekly", hour_utc: 6 },
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "schedule",
      args: { action: "set", project_id: w.liveProjectId, cadence: "weekly", hour_utc: 6 },
    }),
  },
  {
    op: "schedules.set",
    name: "weekly with audit options for each run",
    status: 201,
    changes: true,
    rest: (w) => ({
      method: "PUT",
      path: `/v1/projects/${w.liveProjectId}/schedule`,
      key: w.live.key,
      body: { cadence: "weekly", hour_utc: 6, exclude: ["/tag/**"], max_depth: 4 },
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "schedule",
      args: {
        action: "set",
        project_id: w.liveProjectId,
        cadence: "weekly",
        hour_utc: 6,
        exclude: ["/tag/**"],
        max_depth: 4,
      },
    }),
  },
  {
    op: "schedules.set",
    name: "sandbox key on the live project",
    changes: false,
    rest: (w) => ({
      method: "PUT",
      path: `/v1/projects/${w.liveProjectId}/schedule`,
      key: w.sandbox.key,
      body: { cadence: "weekly", hour_utc: 6 },
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "schedule",
      args: { action: "set", project_id: w.liveProjectId, cadence: "weekly", hour_utc: 6 },
    }),
  },
  {
    op: "schedules.get",
    name: "the schedule set",
    status: 200,
    changes: false,
    async setup(app, w) {
      if (w.extra.scheduled) return;
      const res = await app.req("PUT", `/v1/projects/${w.liveProjectId}/schedule`, {
        key: w.live.key,
        body: { cadence: "weekly", hour_utc: 7 },
      });
      if (res.status !== 201) throw new Error(`schedule setup: ${res.status} ${res.text}`);
      w.extra.scheduled = "yes";
    },
    rest: (w) => ({
      method: "GET",
      path: `/v1/projects/${w.liveProjectId}/schedule`,
      key: w.live.key,
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "schedule",
      args: { action: "get", project_id: w.liveProjectId },
    }),
  },
  {
    op: "schedules.delete",
    name: "remove it",
    status: 200,
    changes: true,
    rest: (w) => ({
      method: "DELETE",
      path: `/v1/projects/${w.liveProjectId}/schedule`,
      key: w.live.key,
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "schedule",
      args: { action: "delete", project_id: w.liveProjectId },
    }),
  },
  {
    op: "schedules.delete",
    name: "a sandbox key cannot remove it",
    changes: false,
    rest: (w) => ({
      method: "DELETE",
      path: `/v1/projects/${w.liveProjectId}/schedule`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "schedule",
      args: { action: "delete", project_id: w.liveProjectId },
    }),
  },
  {
    op: "billing.plans",
    name: "public plans",
    status: 200,
    changes: false,
    rest: () => ({ method: "GET", path: "/v1/plans" }),
    mcp: () => ({ key: null, tool: "billing", args: { action: "plans" } }),
  },
  {
    op: "billing.credits",
    name: "live balance",
    status: 200,
    changes: false,
    rest: (w) => ({ method: "GET", path: "/v1/credits", key: w.live.key }),
    mcp: (w) => ({ key: w.live.key, tool: "billing", args: { action: "credits" } }),
  },
  {
    op: "billing.purchase_credits",
    name: "sandbox keys cannot buy",
    changes: false,
    rest: (w) => ({
      method: "POST",
      path: "/v1/credits/purchases",
      key: w.sandbox.key,
      body: { pack_id: "pack_500" },
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "billing",
      args: { action: "buy_credits", pack_id: "pack_500" },
    }),
  },
  {
    op: "billing.subscribe",
    name: "no Stripe on this server",
    changes: false,
    rest: (w) => ({
      method: "POST",
      path: "/v1/subscriptions",
      key: w.live.key,
      body: { project_id: w.liveProjectId, plan_id: "basic" },
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "billing",
      args: { action: "subscribe", project_id: w.liveProjectId, plan_id: "basic" },
    }),
  },
  {
    op: "billing.subscription",
    name: "state of the live project",
    status: 200,
    changes: false,
    rest: (w) => ({
      method: "GET",
      path: `/v1/subscription?project_id=${w.liveProjectId}`,
      key: w.live.key,
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "billing",
      args: { action: "subscription", project_id: w.liveProjectId },
    }),
  },
  {
    op: "billing.portal",
    name: "sandbox keys have no billing to manage",
    changes: false,
    rest: (w) => ({ method: "POST", path: "/v1/billing-portal", key: w.sandbox.key, body: {} }),
    mcp: (w) => ({ key: w.sandbox.key, tool: "billing", args: { action: "portal" } }),
  },
  {
    op: "billing.portal",
    name: "no Stripe on this server",
    changes: false,
    rest: (w) => ({ method: "POST", path: "/v1/billing-portal", key: w.live.key, body: {} }),
    mcp: (w) => ({ key: w.live.key, tool: "billing", args: { action: "portal" } }),
  },
  {
    op: "upgrades.create",
    name: "a live key is already live",
    changes: false,
    rest: (w) => ({ method: "POST", path: "/v1/upgrades", key: w.live.key, body: {} }),
    mcp: (w) => ({ key: w.live.key, tool: "billing", args: { action: "upgrade" } }),
  },
  {
    op: "upgrades.create",
    name: "no Stripe on this server",
    changes: false,
    rest: (w) => ({ method: "POST", path: "/v1/upgrades", key: w.sandbox.key, body: {} }),
    mcp: (w) => ({ key: w.sandbox.key, tool: "billing", args: { action: "upgrade" } }),
  },
  {
    op: "upgrades.get",
    name: "the sandbox key reads its pending upgrade",
    status: 200,
    changes: false,
    async setup(app, w) {
      w.extra.upgradeId ??= await pendingUpgrade(app, w.sandbox.accountId);
    },
    rest: (w) => ({ method: "GET", path: `/v1/upgrades/${w.extra.upgradeId}`, key: w.sandbox.key }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "billing",
      args: { action: "upgrade_status", upgrade_id: w.extra.upgradeId },
    }),
  },
  {
    op: "upgrades.get",
    name: "another account's upgrade is not_found",
    changes: false,
    rest: (w) => ({ method: "GET", path: `/v1/upgrades/${w.extra.upgradeId}`, key: w.live.key }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "billing",
      args: { action: "upgrade_status", upgrade_id: w.extra.upgradeId },
    }),
  },
  {
    op: "webhooks.create",
    name: "register an endpoint",
    status: 201,
    changes: true,
    rest: (w) => ({
      method: "POST",
      path: "/v1/webhooks",
      key: w.live.key,
      body: { url: "https://127.0.0.1:9/hooks", events: ["audit.completed"] },
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "webhooks",
      args: { action: "create", url: "https://127.0.0.1:9/hooks", events: ["audit.completed"] },
    }),
  },
  {
    op: "webhooks.list",
    name: "list endpoints",
    status: 200,
    changes: false,
    async setup(app, w) {
      if (w.extra.webhookId) return;
      const res = await app.req("POST", "/v1/webhooks", {
        key: w.live.key,
        body: { url: "https://127.0.0.1:9/kept" },
      });
      if (res.status !== 201) throw new Error(`webhook setup: ${res.status} ${res.text}`);
      w.extra.webhookId = res.body.webhook_id;
    },
    rest: (w) => ({ method: "GET", path: "/v1/webhooks", key: w.live.key }),
    mcp: (w) => ({ key: w.live.key, tool: "webhooks", args: { action: "list" } }),
  },
  {
    op: "webhooks.delete",
    name: "delete an endpoint",
    status: 200,
    changes: true,
    rest: (w) => ({ method: "DELETE", path: `/v1/webhooks/${w.extra.webhookId}`, key: w.live.key }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "webhooks",
      args: { action: "delete", webhook_id: w.extra.webhookId },
    }),
  },
  {
    op: "webhooks.delete",
    name: "another account's endpoint is not_found",
    changes: false,
    rest: (w) => ({
      method: "DELETE",
      path: `/v1/webhooks/${w.extra.webhookId}`,
      key: w.sandbox.key,
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "webhooks",
      args: { action: "delete", webhook_id: w.extra.webhookId },
    }),
  },
  {
    op: "projects.create",
    name: "live key registers a site",
    status: 201,
    changes: true,
    rest: (w) => ({
      method: "POST",
      path: "/v1/projects",
      key: w.live.key,
      body: { url: "https://second.example.com", name: "Second" },
    }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "projects",
      args: { action: "create", url: "https://second.example.com", name: "Second" },
    }),
  },
  {
    op: "projects.create",
    name: "sandbox key past its one project",
    changes: false,
    rest: (w) => ({
      method: "POST",
      path: "/v1/projects",
      key: w.sandbox.key,
      body: { url: "https://other.example.com" },
    }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "projects",
      args: { action: "create", url: "https://other.example.com" },
    }),
  },
  {
    op: "projects.create",
    name: "invalid url",
    changes: false,
    rest: (w) => ({ method: "POST", path: "/v1/projects", key: w.live.key, body: { url: "" } }),
    mcp: (w) => ({ key: w.live.key, tool: "projects", args: { action: "create", url: "" } }),
  },
  {
    op: "projects.list",
    name: "sandbox key sees its sandbox project only",
    status: 200,
    changes: false,
    rest: (w) => ({ method: "GET", path: "/v1/projects", key: w.sandbox.key }),
    mcp: (w) => ({ key: w.sandbox.key, tool: "projects", args: { action: "list" } }),
  },
  {
    op: "projects.get",
    name: "own project",
    status: 200,
    changes: false,
    rest: (w) => ({ method: "GET", path: `/v1/projects/${w.liveProjectId}`, key: w.live.key }),
    mcp: (w) => ({
      key: w.live.key,
      tool: "projects",
      args: { action: "get", project_id: w.liveProjectId },
    }),
  },
  {
    op: "projects.get",
    name: "another account's project is not_found",
    changes: false,
    rest: (w) => ({ method: "GET", path: `/v1/projects/${w.liveProjectId}`, key: w.sandbox.key }),
    mcp: (w) => ({
      key: w.sandbox.key,
      tool: "projects",
      args: { action: "get", project_id: w.liveProjectId },
    }),
  },
];

/**
 * A completed audit written straight into the store with the crawl's own writers (the parity
 * world runs no crawl): what a finished crawl leaves behind for the report, share, summary and
 * re-check operations. title_missing fires on two of its 12 pages.
 */
async function completedAudit(app: TestApp, accountId: string, projectId: string) {
  const auditId = newId("aud", app.clock.now());
  await seedCompletedAudit(app.kv, {
    accountId,
    projectId,
    auditId,
    pages: 12,
    completedAt: app.clock.now(),
  });
  return auditId;
}

/** A completed audit of the live project. */
async function completedLiveAudit(app: TestApp, w: World): Promise<void> {
  w.extra.doneAuditId ??= await completedAudit(app, w.live.accountId, w.liveProjectId);
}

/** A pending upgrade of the account, as POST /v1/upgrades stores it (the world has no Stripe). */
async function pendingUpgrade(app: TestApp, accountId: string): Promise<string> {
  const now = app.clock.now();
  const upgrade: UpgradeRecord = {
    id: newId("upg", now),
    accountId,
    startedBy: "key_parity",
    status: "pending",
    codeDigest: "0".repeat(64),
    createdAt: now,
    expiresAt: now + 86_400_000,
    browserDigest: null,
    checkout: null,
    paidAt: null,
    result: null,
    claimedAt: null,
    claimedBy: null,
    liveKeyId: null,
  };
  await app.kv.atomic()
    .set(keys.upgrade(accountId, upgrade.id), upgrade)
    .set(keys.upgradeOwner(upgrade.id), accountId)
    .commit();
  return upgrade.id;
}
