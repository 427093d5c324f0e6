/**
 * The Subscription state of `GET /v1/subscription`, and the checks other capabilities use to decide
 * whether a project's work is included or paid per unit.
 */
import { ApiError, type Deps, iso, keys, readMany } from "../platform/mod.ts";
import { canSee } from "../identity/mod.ts";
import type { KeyMode } from "../identity/types.ts";
import type { PendingCheckoutRecord, PlanId, SubscriptionRecord } from "./types.ts";
import type { ProjectRecord } from "../projects/types.ts";
import { isActive } from "./subscription_state.ts";
import { PENDING_CHECKOUT_MS } from "./checkout.ts";

export interface SubscriptionState {
  project_id: string;
  plan: PlanId | null;
  status: "active" | "pending_payment" | "none";
  paid_until?: string;
}

/**
 * `active` while the paid period covers now; else `pending_payment` while the API-created checkout
 * is under 24 hours old; else `none`. Sandbox projects are always `none`. 404 for foreign ids.
 */
export async function getSubscriptionState(
  deps: Deps,
  caller: { accountId: string; mode: KeyMode },
  projectId: string,
): Promise<SubscriptionState> {
  const { accountId } = caller;
  const [projectEntry, subEntry, pendingEntry] = await readMany(deps.kv, [
    keys.project(accountId, projectId),
    keys.subscription(projectId),
    keys.pendingCheckout(projectId),
  ]);
  const project = projectEntry.value;
  if (!project || !canSee(caller.mode, project.sandbox)) {
    throw new ApiError("not_found", `No project '${projectId}' on this account`);
  }
  return subscriptionStateOf(project, subEntry.value, pendingEntry.value, deps.clock.now());
}

/** The pure rule behind `getSubscriptionState`. */
export function subscriptionStateOf(
  project: ProjectRecord,
  sub: SubscriptionRecord | null,
  pending: PendingCheckoutRecord | null,
  now: number,
): SubscriptionState {
  const none: SubscriptionState = { project_id: project.id, plan: null, status: "none" };
  if (project.sandbox) return none;
  if (sub && isActive(sub, now)) {
    return {
      project_id: project.id,
      plan: sub.plan,
      status: "active",
      paid_until: iso(sub.paidUntil)!,
    };
  }
  if (pending && now - pending.createdAt < PENDING_CHECKOUT_MS) {
    return { project_id: project.id, plan: pending.planId, status: "pending_payment" };
  }
  return none;
}
