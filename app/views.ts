import { iso } from "../domain/clock.ts";
import { SANDBOX_LIMITS } from "../domain/accounts.ts";
import type { Principal } from "../domain/auth.ts";
import type { ScheduleFunding, ScheduleRecord } from "../domain/monitoring/schedules.ts";
import type { ApiKeyRecord, ProjectRecord, SubscriptionRecord } from "../domain/records.ts";
import { accessOf } from "../domain/subscription_state.ts";

/** Shapes of the public resources, built from records. Times leave as ISO strings. */

export const sandboxLimits = () => ({
  audits: SANDBOX_LIMITS.audits,
  articles: SANDBOX_LIMITS.articles,
  expires_days: SANDBOX_LIMITS.expires_days,
});

const accountViews = new WeakMap<Principal, ReturnType<typeof buildAccountView>>();

/**
 * The Account resource of a principal. Memoised per cached principal: it is the hottest read,
 * and a principal object is replaced whenever what it shows changes.
 */
export function accountView(p: Principal) {
  let view = accountViews.get(p);
  if (!view) accountViews.set(p, view = buildAccountView(p));
  return view;
}

function buildAccountView(p: Principal) {
  const base = {
    account_id: p.account.id,
    email: p.account.email,
    email_verified: p.account.emailVerified,
    mode: p.key.mode,
    plan: null,
    created_at: iso(p.account.createdAt)!,
    // A sandbox key sees only the sandbox project(s) of its account (`canSee`).
    projects_count: p.key.mode === "sandbox" ? p.account.sandboxProjects : p.account.projectsCount,
  };
  if (p.key.mode !== "sandbox") return base;
  return {
    ...base,
    sandbox_usage: { audits: p.usage?.audits ?? 0, articles: p.usage?.articles ?? 0 },
    sandbox_limits: sandboxLimits(),
  };
}

export function apiKeyView(k: ApiKeyRecord, lastUsedAt: number | null, raw?: string) {
  return {
    id: k.id,
    name: k.name,
    key_prefix: k.prefix,
    last4: k.last4,
    mode: k.mode,
    created_at: iso(k.createdAt)!,
    last_used_at: iso(lastUsedAt),
    expires_at: iso(k.expiresAt),
    revoked_at: iso(k.revokedAt),
    ...(raw ? { api_key: raw } : {}),
  };
}

export function projectView(
  p: ProjectRecord,
  sub: SubscriptionRecord | null,
  now: number,
  detail: "create" | "list" | "detail",
) {
  const base = {
    project_id: p.id,
    url: p.url,
    name: p.name,
    status: p.status,
    language: p.language,
    country: p.country,
    sandbox: p.sandbox,
    access: accessOf(p, sub, now),
    created_at: iso(p.createdAt)!,
  };
  if (detail === "create") return base;
  const withCounts = { ...base, counts: { ...p.counts } };
  if (detail === "list") return withCounts;
  return { ...withCounts, latest_audit: p.latestAudit };
}

/** The Schedule resource: a project's schedule with how its runs are paid as of now. */
export function scheduleView(s: ScheduleRecord, f: ScheduleFunding) {
  return {
    project_id: s.projectId,
    cadence: s.cadence,
    hour_utc: s.hourUtc,
    day_of_week: s.dayOfWeek,
    day_of_month: s.dayOfMonth,
    render: s.render === true,
    status: s.status,
    paused_reason: s.pausedReason,
    paused_at: iso(s.pausedAt),
    next_run_at: iso(s.nextRunAt),
    funding: {
      kind: f.kind,
      plan: f.plan,
      max_cadence: f.maxCadence,
      credits_per_run: f.creditsPerRun,
    },
    last_run: s.lastRun
      ? {
        due_at: iso(s.lastRun.dueAt)!,
        ran_at: iso(s.lastRun.at)!,
        audit_id: s.lastRun.auditId,
        outcome: s.lastRun.outcome,
      }
      : null,
    runs: s.runs,
    created_at: iso(s.createdAt)!,
    updated_at: iso(s.updatedAt)!,
  };
}
