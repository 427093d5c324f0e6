/**
 * The capabilities the service is made of. Each plugs its routes, its queue handlers and its
 * periodic maintenance into the one app and the one dispatcher; main.ts wires them in order.
 */
import type { JobHandlers } from "./jobs/dispatcher.ts";
import type { RouteGroup } from "./routes/app.ts";
import type { Services } from "./routes/env.ts";

export interface Capability {
  name: string;
  /** Registers HTTP routes on the app. */
  routes?: RouteGroup;
  /** Queue handlers by message type. */
  jobs?: (s: Services) => JobHandlers;
  /** Runs every few seconds and on the cron (stale-job recovery, sweeps); must be idempotent. */
  maintenance?: (s: Services) => Promise<void>;
}

export const capabilities: Capability[] = [];
