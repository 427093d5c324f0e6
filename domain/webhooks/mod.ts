/**
 * Webhooks: endpoints an account registers, the fan-out of events to them, signed deliveries
 * with retries, and the sweep. The public face of the capability; the persisted shapes are in
 * `types.ts`.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/mod.ts";
 * declare const deps: Deps, accountId: string;
 * import { listWebhooks } from "./mod.ts";
 * const hooks = await listWebhooks(deps, { accountId, mode: "live" });
 * ```
 *
 * @module
 */
export { runDelivery } from "./deliver.ts";
export { createWebhook, deleteWebhook, type ListedWebhook, listWebhooks } from "./endpoints.ts";
export { fanOutEvent } from "./fan_out.ts";
export { deliveryMessage } from "./messages.ts";
export { maskSecret, openSecret, sealSecret } from "./secret_box.ts";
export { sweepWebhooks } from "./sweep.ts";
