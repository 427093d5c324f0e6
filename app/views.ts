import { iso } from "../domain/platform/mod.ts";
import { type Principal, SANDBOX_LIMITS } from "../domain/identity/mod.ts";
import { type ArticleRecord, SANDBOX_WATERMARK_NOTE } from "../domain/articles/mod.ts";
import type { ScheduleFunding, ScheduleRecord } from "../domain/monitoring/mod.ts";
import {
  CAP_UNITS,
  type CapHit,
  type CapName,
  type PolitenessReport,
  SCOPE_RULES,
  type ScopeRule,
} from "../domain/audit_engine/mod.ts";
import { type AuditOptions, type AuditRecord, triggerOf } from "../domain/audits/mod.ts";
import type { GrantRecord } from "../domain/identity/oauth/types.ts";
import type { ApiKeyRecord } from "../domain/identity/types.ts";
import type { ProjectRecord } from "../domain/projects/types.ts";
import type { SubscriptionRecord } from "../domain/billing/types.ts";
import { accessOf } from "../domain/billing/mod.ts";

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

/** A connected app (an OAuth grant); never any token. */
export function connectedAppView(g: GrantRecord) {
  return {
    id: g.id,
    client_id: g.clientId,
    client_name: g.clientName,
    redirect_host: new URL(g.redirectUri).host,
    mode: g.mode,
    key_id: g.keyId,
    scope: g.scope,
    created_at: iso(g.createdAt)!,
    last_refreshed_at: iso(g.refreshedAt)!,
    expires_at: iso(g.expiresAt)!,
    revoked_at: iso(g.revokedAt),
    revoked_reason: g.revokedReason as
      | "user"
      | "client"
      | "key_revoked"
      | "code_reuse"
      | "refresh_reuse"
      | null,
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
    options: { ...auditOptionsView(s.options), ...accessOptionsView(s) },
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

/** The Audit resource: status, then score, summary, changes and caps hit once completed. */
export function auditView(a: AuditRecord) {
  return {
    audit_id: a.id,
    project_id: a.projectId,
    status: a.status,
    trigger: triggerOf(a),
    started_at: iso(a.createdAt)!,
    ...(a.completedAt !== null ? { completed_at: iso(a.completedAt)! } : {}),
    ...(a.status === "completed" ? { score: a.score!, summary: a.summary! } : {}),
    ...(a.status === "completed" && a.changes ? { changes: a.changes } : {}),
    ...(a.status === "failed" && a.error ? { error: a.error } : {}),
    ...(a.render ? { render: { requested: true as const, ...(a.renderStats ?? {}) } } : {}),
    ...(a.status === "completed" ? { limits_hit: limitsHitView(a) } : {}),
    ...(a.status === "completed" && a.crawl
      ? {
        crawl: {
          complete: a.crawl.complete,
          pages_fetched: a.jobsCompleted + a.jobsFailed,
          urls_not_fetched: a.crawl.unfetched,
          pages_reused: a.crawl.reused ?? 0,
        },
      }
      : {}),
    options: { ...auditOptionsView(a.options), ...accessOptionsView(a) },
    ...(a.status === "completed" && scopeRulesOf(a.options).length > 0
      ? { scope: { left_out: scopeLeftOutView(a.options, a.scopeLeftOut ?? {}) } }
      : {}),
    ...(a.status === "completed" && a.politeness
      ? { politeness: politenessView(a.politeness) }
      : {}),
  };
}

/**
 * The access options an audit was started with, merged into `options`: credentials only as
 * their mask (never a password, cookie or header value), and its rate cap.
 */
export function accessOptionsView(a: Pick<AuditRecord | ScheduleRecord, "auth" | "maxRps">) {
  return {
    ...(a.auth ? { auth: structuredClone(a.auth) } : {}),
    ...(a.maxRps !== undefined ? { max_rps: a.maxRps } : {}),
  };
}

function politenessView(p: PolitenessReport) {
  return {
    slowed: p.slowed,
    max_rps: p.maxRps,
    crawl_delay_seconds: p.crawlDelay,
    crawl_delay_requested_seconds: p.crawlDelayClamped,
    throttled: p.throttled,
    retries: p.retries,
    gave_up: p.gaveUp,
    paused: p.paused ?? 0,
    final_rps: p.finalRps,
  };
}

/**
 * The options an audit (or a schedule's runs) was started with, as the request spells them,
 * `user_agent` always shown. Built field by field: nothing stored reaches a caller unless named
 * here. Staging access and the rate cap live on the audit apart (`accessOptionsView`).
 */
export function auditOptionsView(o: AuditOptions | undefined) {
  return {
    ...(o?.include ? { include: o.include } : {}),
    ...(o?.exclude ? { exclude: o.exclude } : {}),
    ...(o?.maxDepth !== undefined ? { max_depth: o.maxDepth } : {}),
    ...(o?.urls ? { urls: o.urls } : {}),
    ...(o?.sitemapOnly ? { sitemap_only: true as const } : {}),
    user_agent: o?.userAgent ?? "serpwright",
    ...(o?.groups ? { groups: o.groups.map((g) => ({ name: g.name, pattern: g.pattern })) } : {}),
  };
}

/** The scope rules an audit's options set (the ones `scope.left_out` reports). */
function scopeRulesOf(o: AuditOptions | undefined): ScopeRule[] {
  if (!o) return [];
  const set: Record<ScopeRule, boolean> = {
    urls: o.urls !== undefined,
    sitemap_only: o.sitemapOnly === true,
    exclude: o.exclude !== undefined,
    include: o.include !== undefined,
    max_depth: o.maxDepth !== undefined,
  };
  return SCOPE_RULES.filter((r) => set[r]);
}

/** Per scope option set: what it left out (0 when nothing). */
function scopeLeftOutView(
  o: AuditOptions | undefined,
  left: Partial<Record<ScopeRule, number>>,
): Partial<Record<ScopeRule, number>> {
  return Object.fromEntries(scopeRulesOf(o).map((r) => [r, left[r] ?? 0]));
}

/** The budgets an audit's funding sets (crawlLimitsFor): the trial's, or the plan's. */
const FUNDED_BUDGETS: ReadonlySet<CapName> = new Set(["pages", "bytes", "duration"]);

/**
 * The caps an audit hit. A budget its funding sets says whose it is (`budget`), and the trial's
 * names the way out of it (`upgrade_path`: POST it with the sandbox key, hand a human the link).
 */
function limitsHitView(a: Pick<AuditRecord, "limitsHit" | "funding">) {
  const trial = a.funding.kind === "sandbox";
  return (Object.entries(a.limitsHit ?? {}) as [CapName, CapHit][]).map(([name, h]) => {
    const budget: "trial" | "plan" | "operator" | undefined = FUNDED_BUDGETS.has(name)
      ? (trial ? "trial" : "plan")
      : name === "error_rate"
      ? "operator"
      : undefined;
    return {
      limit: name,
      value: h.limit,
      left_out: h.leftOut,
      unit: CAP_UNITS[name] ?? "items",
      ...(budget ? { budget } : {}),
      ...(budget === "trial" ? { upgrade_path: UPGRADE_PATH } : {}),
    } as {
      limit: CapName;
      value: number;
      left_out: number;
      unit: string;
      budget?: "trial" | "plan" | "operator";
      upgrade_path?: string;
    };
  });
}

/** Where a sandbox key starts its upgrade (docs/billing.md "Upgrades"). */
export const UPGRADE_PATH = "/v1/upgrades";

/** The Article resource: status only while generating; the draft once ready. */
export function articleView(a: ArticleRecord) {
  const hasContent = a.status === "ready" || a.status === "published";
  return {
    article_id: a.id,
    project_id: a.projectId,
    status: a.status,
    ...(hasContent
      ? {
        title: a.title!,
        meta_description: a.metaDescription!,
        content_markdown: a.contentMarkdown!,
        word_count: a.wordCount!,
        qa_score: a.qaScore!,
        ...(a.qa ? { qa: a.qa } : {}),
        language: a.language,
      }
      : {}),
    ...generatorView(a),
    ...(a.sandbox ? { watermark: { sandbox: true, note: SANDBOX_WATERMARK_NOTE } } : {}),
    ...(a.status === "failed" && a.error ? { error: a.error } : {}),
    ...(a.status === "published"
      ? { slug: a.slug!, url: a.url!, published_at: iso(a.publishedAt)! }
      : {}),
  };
}

/** The `generator` field: the stored generator, with the model's token usage where there was one. */
function generatorView(a: ArticleRecord) {
  if (a.generator) {
    return {
      generator: {
        kind: a.generator.kind,
        ...(a.generator.model ? { model: a.generator.model } : {}),
        ...(a.usage ? { usage: { ...a.usage } } : {}),
      },
    };
  }
  // A failed article that spent tokens before it failed still says what it cost.
  if (a.status === "failed" && a.usage) {
    return { generator: { kind: "model" as const, usage: { ...a.usage } } };
  }
  return {};
}
