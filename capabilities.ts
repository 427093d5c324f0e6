/**
 * The capabilities the service is made of. Each plugs its routes, its queue handlers and its
 * periodic maintenance into the one app and the one dispatcher; main.ts wires them in order.
 */
import type { JobHandlers, JobRuntime } from "./jobs/dispatcher.ts";
import { auditJobs, auditMaintenance, auditStart } from "./jobs/audit_jobs.ts";
import { articleJobs, articleMaintenance } from "./jobs/article_jobs.ts";
import { recheckJobs, recheckMaintenance } from "./jobs/recheck_jobs.ts";
import type { RouteGroup } from "./routes/app.ts";
import type { Services } from "./routes/env.ts";
import { webhookJobs, webhookMaintenance } from "./jobs/webhook_jobs.ts";
import { scheduleJobs, scheduleMaintenance } from "./jobs/schedule_jobs.ts";
import { mailJobs, mailSweep } from "./jobs/mail_jobs.ts";

export interface Capability {
  name: string;
  /**
   * Its HTTP routes, loaded when a process serves HTTP: a worker never loads Hono, the zod
   * schemas of the API or the MCP SDK (about 40 MiB of its RSS).
   */
  routes?: () => Promise<RouteGroup>;
  /** Queue handlers by message type (worker and all roles only). */
  jobs?: (s: Services, rt: JobRuntime) => JobHandlers;
  /** Runs every few seconds and on the cron (stale-job recovery, sweeps); must be idempotent. */
  maintenance?: (s: Services) => Promise<void>;
  /**
   * Runs once when a process starts, before it serves; idempotent across processes and best
   * effort (a failure is logged and the process starts anyway).
   */
  start?: (s: Services) => Promise<void>;
}

/**
 * Every capability, in order. Their route groups register in this order (route order matters for
 * matching): accounts, API keys and projects first, admin last.
 */
export const capabilities: Capability[] = [
  /** Signup and the account (/v1/signup, /v1/account). */
  { name: "accounts", routes: () => import("./routes/accounts.ts").then((m) => m.accountRoutes) },
  { name: "api keys", routes: () => import("./routes/api_keys.ts").then((m) => m.apiKeyRoutes) },
  { name: "projects", routes: () => import("./routes/projects.ts").then((m) => m.projectRoutes) },
  {
    name: "webhooks",
    routes: () => import("./routes/webhooks.ts").then((m) => m.webhookRoutes),
    jobs: (s) => webhookJobs(s.deps),
    maintenance: (s) => webhookMaintenance(s.deps),
  },
  {
    /** Outbound mail over SMTP, and the page an email verification link opens. */
    name: "mail",
    routes: () => import("./routes/verify_email.ts").then((m) => m.verifyEmailRoutes),
    jobs: (s) => mailJobs(s.deps),
    maintenance: (s) => mailSweep(s.deps),
  },
  { name: "billing", routes: () => import("./routes/billing.ts").then((m) => m.billingRoutes) },
  /** Upgrades an agent starts and a human finishes: /v1/upgrades and the /upgrade pages. */
  { name: "upgrades", routes: () => import("./routes/upgrades.ts").then((m) => m.upgradeRoutes) },
  {
    name: "audits",
    routes: () => import("./routes/audits.ts").then((m) => m.auditRoutes),
    jobs: (s, rt) => auditJobs(s.deps, rt),
    maintenance: (s) => auditMaintenance(s.deps),
    start: (s) => auditStart(s.deps),
  },
  /** Fixes an agent can apply to a completed audit's findings, and its redirect map. */
  { name: "fixes", routes: () => import("./routes/fixes.ts").then((m) => m.fixRoutes) },
  {
    /** Re-checking one check of a completed audit on its affected URLs. */
    name: "rechecks",
    routes: () => import("./routes/rechecks.ts").then((m) => m.recheckRoutes),
    jobs: (s, rt) => recheckJobs(s.deps, rt),
    maintenance: (s) => recheckMaintenance(s.deps),
  },
  {
    name: "articles",
    routes: () => import("./routes/articles.ts").then((m) => m.articleRoutes),
    jobs: (s) => articleJobs(s.deps),
    maintenance: (s) => articleMaintenance(s.deps),
  },
  {
    name: "schedules",
    routes: () => import("./routes/schedules.ts").then((m) => m.scheduleRoutes),
    jobs: (s) => scheduleJobs(s.deps),
    maintenance: (s) => scheduleMaintenance(s.deps),
  },
  /** The HTML report, share links and the public pages they open (routes/reports.ts). */
  { name: "reports", routes: () => import("./routes/reports.ts").then((m) => m.reportRoutes) },
  { name: "pages", routes: () => import("./routes/pages.ts").then((m) => m.pageRoutes) },
  /** The same capabilities as MCP tools at /mcp, on the same rules (routes/mcp/). */
  { name: "mcp", routes: () => import("./routes/mcp/route.ts").then((m) => m.mcpRoutes) },
  /** Discovery: the MCP server card, the API catalog (RFC 9727), /status (routes/discovery.ts). */
  {
    name: "discovery",
    routes: () => import("./routes/discovery.ts").then((m) => m.discoveryRoutes),
  },
  /** OAuth 2.1 sign-in for MCP hosts that run in a browser (routes/oauth/, domain/identity/oauth/). */
  { name: "oauth", routes: () => import("./routes/oauth/index.ts").then((m) => m.oauthRoutes) },
  /** The operator's routes under /admin (behind the operator token); last. */
  { name: "admin", routes: () => import("./routes/admin.ts").then((m) => m.adminRoutes) },
];

/** The route groups of every capability, in order (web and all roles). */
export function loadRouteGroups(): Promise<RouteGroup[]> {
  return Promise.all(capabilities.flatMap((c) => (c.routes ? [c.routes()] : [])));
}
