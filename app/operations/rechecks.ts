/**
 * Re-checking a fix (additive): fetch again only the affected URLs of one check of a completed
 * audit, judge that check on them, and read the outcome per URL. The audit itself never changes.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { MAX_EVIDENCE } from "../../domain/audit_engine/mod.ts";
import { RECHECK_MAX_URLS, RECHECK_URLS_PER_UNIT } from "../../domain/billing/mod.ts";
import {
  createRecheck,
  getRecheck,
  listRecheckItems,
  type RecheckRecord,
} from "../../domain/rechecks/mod.ts";
import type { Deps } from "../../domain/platform/mod.ts";
import { queueDepth, recheckPollSeconds } from "../jobs/poll_hint.ts";
import { defineOperation } from "../operation.ts";
import { AuditIdParam } from "./audits.ts";

const RecheckParam = AuditIdParam.extend({
  check: z.string().min(1).max(100).openapi({
    param: { name: "check", in: "path" },
    example: "title_missing",
  }),
});

const RecheckIdParam = z.object({
  recheckId: z.string().min(1).max(100).openapi({ param: { name: "recheckId", in: "path" } }),
});

const Status = z.enum(["queued", "running", "completed", "failed"]);

const Counts = z.object({
  fixed: z.number().int(),
  still_failing: z.number().int(),
  not_checked: z.number().int(),
}).openapi("RecheckCounts", { description: "URLs judged so far, by outcome" });

const Charge = z.object({
  funding: z.enum(["subscription", "credits"]),
  credits: z.number().int().openapi({
    description: `Credits charged: recheck_urls, 1 per ${RECHECK_URLS_PER_UNIT} URLs or part ` +
      "of them; 0 when a subscription includes it. Refunded if the re-check fails",
  }),
}).openapi("RecheckCharge");

const RecheckFields = {
  recheck_id: z.string().openapi({ example: "rck_0abc" }),
  audit_id: z.string(),
  project_id: z.string(),
  check: z.string().openapi({ example: "title_missing" }),
  status: Status,
  urls_checked: z.number().int().openapi({
    description: `URLs this re-check fetches: the first ${RECHECK_MAX_URLS} affected URLs of ` +
      "the audit's stored evidence, in its order (by URL)",
  }),
  affected_count: z.number().int().openapi({ description: "The audit's affected count" }),
  urls_left_out: z.number().int().openapi({
    description: `Affected URLs not re-checked (past the first ${RECHECK_MAX_URLS}, or past ` +
      "the audit's stored evidence)",
  }),
  charge: Charge,
  poll: z.string().openapi({ example: "/v1/rechecks/rck_0abc" }),
};

export const RecheckAccepted = z.object({
  ...RecheckFields,
  poll_after_seconds: z.number().int().openapi({
    description: "When to poll first, estimated from the job's size and the jobs queued ahead " +
      "(2 to 60 s; also the Retry-After header)",
    example: 2,
  }),
}).openapi("RecheckAccepted");

const Evidence = z.record(z.string(), z.unknown()).openapi("RecheckEvidence", {
  description: "A fresh evidence item, in the shape of the check's findings " +
    "(GET /v1/audits/{auditId}/issues/{check}): `url` and the facts of the check",
});

const Result = z.enum(["fixed", "still_failing", "not_checked"]);

const ItemResult = z.object({
  target: z.string().openapi({
    description: "The link target",
  }),
  result: Result.openapi({
    description: "fixed: this item no longer fails (a link removed, or its target answers " +
      "well now); still_failing: it still fails; not_checked: no verdict on it",
  }),
  status: z.number().int().nullable().openapi({
    description: "The target's HTTP status now (after redirects for broken links); null " +
      "when not fetched (a removed link) or no answer",
  }),
  failure: z.string().nullable(),
  link_removed: z.boolean().openapi({
    description: "The page no longer links to the target: fixed without fetching it",
  }),
}).openapi("RecheckItemResult");

const Item = z.object({
  url: z.string(),
  result: z.enum(["fixed", "still_failing", "not_checked"]).openapi({
    description: "fixed: the URL answers and the check no longer fires on it; still_failing: " +
      "it fires, see evidence; not_checked: no verdict, see reason",
  }),
  status: z.number().int().nullable().openapi({
    description: "The URL's HTTP status now; null when it got no answer or was not fetched",
  }),
  failure: z.string().nullable().openapi({
    description: "timeout, network, tls, dns, refused, ... when it got no answer",
  }),
  reason: z.enum([
    "blocked_by_robots",
    "fetch_failed",
    "error_status",
    "redirect",
    "not_html",
    "noindex",
    "budget",
  ]).nullable().openapi({
    description: "not_checked only: why there is no verdict (noindex: a check of indexable " +
      "pages on a page that is now noindex)",
  }),
  evidence: z.array(Evidence).openapi({
    description: `still_failing only: fresh evidence items, at most ${MAX_EVIDENCE}`,
  }),
  evidence_count: z.number().int().openapi({ description: "Evidence items found" }),
  item_results: z.array(ItemResult).optional().openapi({
    description: "Link checks (broken_internal_links, internal_redirect_links): the verdict " +
      "per link target the audit found on this URL (at most 20), so fixing one of two links " +
      "shows one fixed and one still_failing with its fresh status. Absent for other checks, " +
      "whose one item is the URL itself",
  }),
  checked_at: z.string(),
}).openapi("RecheckItem");

export const Recheck = z.object({
  ...RecheckFields,
  started_at: z.string(),
  completed_at: z.string().optional(),
  urls_done: z.number().int().openapi({ description: "URLs judged so far" }),
  counts: Counts,
  item_counts: Counts.optional().openapi({
    description: "Once completed: items by outcome (link checks count each link of " +
      "item_results; other checks each URL, as counts)",
  }),
  items: z.array(Item).optional().openapi({
    description: "Once completed: every URL re-checked, in the order taken",
  }),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
}).openapi("Recheck");

const iso = (ms: number) => new Date(ms).toISOString();

function fields(r: RecheckRecord) {
  return {
    recheck_id: r.id,
    audit_id: r.auditId,
    project_id: r.projectId,
    check: r.check,
    status: r.status,
    urls_checked: r.urls,
    affected_count: r.affected,
    urls_left_out: r.leftOut,
    charge: {
      funding: r.funding.kind === "credits" ? "credits" as const : "subscription" as const,
      credits: r.funding.kind === "credits" ? r.funding.amount : 0,
    },
    poll: `/v1/rechecks/${r.id}`,
  };
}

/** The re-check as `GET /v1/rechecks/{id}` answers it; its items once completed. */
async function recheckView(deps: Deps, r: RecheckRecord) {
  const items: z.infer<typeof Item>[] = [];
  const itemCounts = { fixed: 0, still_failing: 0, not_checked: 0 };
  if (r.status === "completed") {
    for (const item of await listRecheckItems(deps, r.id)) {
      const o = item.outcome;
      if (!o) continue;
      // Only link checks have items other than the URL: elsewhere the URL's fields say it all.
      const parts = o.parts?.map((p) => ({
        target: p.target,
        result: p.result,
        status: p.status,
        failure: p.failure,
        link_removed: p.linkRemoved,
      }));
      if (parts) { for (const p of parts) itemCounts[p.result]++; }
      else itemCounts[o.result]++;
      items.push({
        url: item.url,
        result: o.result,
        status: o.status,
        failure: o.failure,
        reason: o.reason,
        evidence: o.evidence,
        evidence_count: o.evidenceCount,
        ...(parts ? { item_results: parts } : {}),
        checked_at: iso(o.checkedAt),
      });
    }
  }
  return {
    ...fields(r),
    started_at: iso(r.createdAt),
    ...(r.completedAt !== null ? { completed_at: iso(r.completedAt) } : {}),
    urls_done: r.done,
    counts: r.counts,
    ...(r.status === "completed" ? { item_counts: itemCounts, items } : {}),
    ...(r.status === "failed" && r.error ? { error: r.error } : {}),
  };
}

export const startRecheckOp = defineOperation({
  id: "rechecks.start",
  method: "post",
  path: "/v1/audits/{auditId}/issues/{check}/recheck",
  tags: ["Audits"],
  summary: "Re-check a fix: fetch again only this check's affected URLs of a completed audit " +
    `(at most ${RECHECK_MAX_URLS}) and judge the check on them (202). Poll after poll_after_seconds.`,
  description: "Checks judged on their own pages (titles, descriptions, headings, canonicals, " +
    "noindex, headers, ...), URL statuses (http_4xx, http_5xx, fetch_failed) and links " +
    "(broken_internal_links, internal_redirect_links) can be re-checked; site-wide verdicts " +
    "(robots.txt, sitemaps, duplicates across pages, orphans, click depth, rendered and " +
    "agent-readiness checks) answer 409 invalid_state with the reason. An unknown check is " +
    "404; a check that did not fire in the audit, an audit not completed, or a staging audit " +
    "(made with auth: its credentials are gone; reason staging_audit), 409. Each call " +
    "is a new re-check: retry with the same Idempotency-Key. Charged per URL (GET /v1/plans " +
    "recheck_pricing), included with a subscription; sandbox keys: 402 payment_required.",
  access: "key",
  tokens: "allow",
  sandbox: { refuse: "payment_required" },
  leaves: "a re-check, kept with its audit",
  params: RecheckParam,
  status: 202,
  output: RecheckAccepted,
  outputDescription: "Accepted; poll the `poll` path",
  errors: [
    "not_found",
    "invalid_state",
    "payment_required",
    "insufficient_credits",
    "idempotency_conflict",
  ],
  idempotent: true,
  machinePayable: true,
  async run({ params }, { services, actor }) {
    const r = await createRecheck(services.deps, actor, params.auditId, params.check);
    const queued = await queueDepth(services.deps);
    return { ...fields(r), poll_after_seconds: recheckPollSeconds(r.urls, queued) };
  },
});

export const getRecheckOp = defineOperation({
  id: "rechecks.get",
  method: "get",
  path: "/v1/rechecks/{recheckId}",
  tags: ["Audits"],
  summary: "A re-check: status and counts while it runs, every URL's outcome once completed",
  access: "key",
  tokens: "allow",
  params: RecheckIdParam,
  status: 200,
  output: Recheck,
  outputDescription: "The re-check",
  errors: ["not_found"],
  async run({ params }, { services, actor }) {
    const r = await getRecheck(services.deps, actor.accountId, params.recheckId, actor.mode);
    return await recheckView(services.deps, r);
  },
});

/** The re-check operations, in the order the API reference lists them. */
export const RECHECK_OPERATIONS = [startRecheckOp, getRecheckOp];
