/**
 * The capabilities the service is made of. Each plugs its routes, its queue handlers and its
 * periodic maintenance into the one app and the one dispatcher; main.ts wires them in order.
 */
import type { JobHandlers, JobRuntime } from "./jobs/dispatcher.ts";
import { auditJobs, auditMaintenance, auditStart } from "./jobs/audit_jobs.ts";
import { auditRoutes } from "./routes/audits.ts";
import { articleJobs, articleMaintenance } from "./jobs/article_jobs.ts";
import { articleRoutes } from "./routes/articles.ts";
import type { RouteGroup } from "./routes/app.ts";
import type { Services } from "./routes/env.ts";
import { webhookJobs, webhookMaintenance } from "./jobs/webhook_jobs.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import { billingRoutes } from "./routes/billing.ts";
import { pageRoutes } from "./routes/pages.ts";
import { mcpRoutes } from "./routes/mcp/route.ts";
import { scheduleJobs, scheduleMaintenance } from "./jobs/schedule_jobs.ts";
import { scheduleRoutes } from "./routes/schedules.ts";

export interface Capability {
  name: string;
  /** Registers HTTP routes on the app. */
  routes?: RouteGroup;
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

export const capabilities: Capability[] = [
  {
    name: "webhooks",
    routes: webhookRoutes,
    jobs: (s) => webhookJobs(s.deps),
    maintenance: (s) => webhookMaintenance(s.deps),
  },
  { name: "billing", routes: billingRoutes },
  {
    name: "audits",
    routes: auditRoutes,
    jobs: (s, rt) => auditJobs(s.deps, rt),
    maintenance: (s) => auditMaintenance(s.deps),
    start: (s) => auditStart(s.deps),
  },
  {
    name: "articles",
    routes: articleRoutes,
    jobs: (s) => articleJobs(s.deps),
    maintenance: (s) => articleMaintenance(s.deps),
  },
  {
    name: "schedules",
    routes: scheduleRoutes,
    jobs: (s) => scheduleJobs(s.deps),
    maintenance: (s) => scheduleMaintenance(s.deps),
  },
  { name: "pages", routes: pageRoutes },
  /** The same capabilities as MCP tools at /mcp, on the same rules (routes/mcp/). */
  { name: "mcp", routes: mcpRoutes },
];
