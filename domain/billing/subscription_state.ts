import type { ProjectAccess, ProjectRecord } from "../projects/types.ts";
import type { SubscriptionRecord } from "./types.ts";

/** Whether a subscription covers the moment `now`. */
export function isActive(sub: SubscriptionRecord | null, now: number): boolean {
  return sub !== null && sub.paidUntil > now;
}

/** The project's `access` value: sandbox projects are `sandbox`, paid ones `active`. */
export function accessOf(
  project: ProjectRecord,
  sub: SubscriptionRecord | null,
  now: number,
): ProjectAccess {
  if (project.sandbox) return "sandbox";
  return isActive(sub, now) ? "active" : "pending_payment";
}
