/**
 * Completing an audit after its last crawl step: the record, its stored issues, the project's
 * latest audit, the site facts and the completion events, all in one commit.
 *
 * @module
 */
import { type Deps, keys, read, recordEvent } from "../platform/mod.ts";
import {
  type CrawlOutcome,
  type CrawlState,
  markForPruning,
  readSitePages,
  renderTotals,
  reportOf,
} from "../audit_engine/mod.ts";
import { finishJob, type KnownRecord } from "../jobs/mod.ts";
import { compareIssues } from "./compare.ts";
import { computeGroups } from "./groups.ts";
import { regressionOf } from "./event_changes.ts";
import { AUDIT_JOB } from "./lifecycle.ts";
import { isScoped, sameAuditOptions } from "./options.ts";
import { type AuditRecord, triggerOf } from "./record.ts";
import type { PageGroupDef } from "./types.ts";

/** The audit as its job's claim read it (an audit's options and project never change). */
export interface KnownAudit {
  accountId: string;
  record: AuditRecord;
  /** Its detected page groups, when their count started early (groups.ts `detectGroups`). */
  detected?: Promise<PageGroupDef[]>;
  /** Where the records' keys are cut into ranges read side by side (from the crawl's state). */
  splits?: readonly string[];
  /**
   * Its page groups are stored: the site-wide checks' last pass counted them, in the step that
   * committed (domain/audits/job.ts). Otherwise (that step ran in another process) they are
   * counted here.
   */
  groupsStored?: boolean;
  /** The record as the claim's heartbeat last wrote it (`keepLease`), or null: finishJob's `known`. */
  latest?: () => KnownRecord<AuditRecord> | null;
  /** What the completion reads, read ahead (`readForCompletion`). */
  reads?: CompletionReads;
  /** The crawl state as the audit's last step committed it, in this process. */
  state?: CrawlState;
}

const MAX_FACT_PAGES = 60;
const clip = (s: string | null, n: number) => (s === null ? null : s.slice(0, n));

/**
 * The project, and what its latest audit left (the previous issues and record, the reuse base):
 * the finishing commit checks the project it used, and one that changed meanwhile fails that
 * check, so the commit's next try reads them all again.
 */
async function readProject(kv: Deno.Kv, auditId: string, accountId: string, projectId: string) {
  const projectEntry = await read(kv, keys.project(accountId, projectId));
  const project = projectEntry.value;
  const prevId = project?.latestAudit?.audit_id && project.latestAudit.audit_id !== auditId
    ? project.latestAudit.audit_id
    : null;
  const [previous, prevAudit, base] = await Promise.all([
    prevId ? read(kv, keys.auditIssues(prevId)).then((e) => e.value) : null,
    prevId ? read(kv, keys.audit(accountId, prevId)).then((e) => e.value) : null,
    project ? read(kv, keys.reuseBase(project.id)) : null,
  ]);
  return { projectEntry, project, prevId, previous, prevAudit, base };
}

/** What the completion reads, started ahead (`readForCompletion`). */
export interface CompletionReads {
  project: ReturnType<typeof readProject>;
  /** The project's active marker, which the finishing commit checks and drops. */
  active: Promise<Deno.KvEntryMaybe<string>>;
  sitePages: ReturnType<typeof readSitePages>;
}

/**
 * Starts what an audit's completion reads, while the step of its site-wide checks runs (round
 * trips on a remote KV): all of it is final by then or checked by the finishing commit, which
 * reads again what changed since.
 */
export function readForCompletion(
  kv: Deno.Kv,
  auditId: string,
  accountId: string,
  projectId: string,
): CompletionReads {
  const reads = {
    project: readProject(kv, auditId, accountId, projectId),
    active: read(kv, keys.activeAudit(projectId)),
    sitePages: readSitePages(kv, auditId),
  };
  // Awaited by the completion; one that never comes (the step failed) leaves them behind.
  for (const p of Object.values(reads)) p.catch(() => {});
  return reads;
}

/**
 * Completes an audit in one commit (after its page groups are stored, groups.ts): the record
 * with score, summary and changes, its issues
 * (compared with the project's previous completed audit), the project's latest audit, the site
 * facts articles link to, and the `audit.completed` event.
 *
 * A scoped audit (audit options that narrow the crawl) leaves the site facts of the last
 * whole-site audit in place (articles link across the site, not only a section of it), and
 * `audit.regressed` is sent only when the previous audit had the same options: a score or issue
 * that moved because the scope moved is no regression. `changes` still compare with the
 * previous completed audit, whatever its options.
 */
export async function completeAudit(
  deps: Deps,
  auditId: string,
  outcome: CrawlOutcome,
  known?: KnownAudit,
): Promise<void> {
  const { kv } = deps;
  // Read beside the rest, unless read ahead.
  const ahead = known
    ? known.reads ?? readForCompletion(kv, auditId, known.accountId, known.record.projectId)
    : undefined;
  let early = ahead?.project;
  // Side by side (each a few round trips on a remote KV, none reading what another writes): the
  // report, the crawl state (as the last step committed it, when it ran here), and the page
  // groups, written before the completing commit, so a completed audit always has them. An
  // audit's options never change: the claim's record has its groups.
  const [report, state] = await Promise.all([
    reportOf(kv, auditId, outcome, ahead?.sitePages),
    known?.state ?? read(kv, keys.auditCrawl(auditId)).then((e) => e.value),
    (async () => {
      if (known?.groupsStored) return;
      let record = known?.record ?? null;
      if (!known) {
        const owner = (await read(kv, keys.auditOwner(auditId))).value;
        record = owner ? (await read(kv, keys.audit(owner, auditId))).value : null;
      }
      await computeGroups(kv, auditId, record?.options?.groups, known?.detected, known?.splits);
    })(),
  ]);
  await finishJob(deps, AUDIT_JOB, auditId, async ({ op, record: audit, accountId, now }) => {
    const reading = early && known?.accountId === accountId &&
        known.record.projectId === audit.projectId
      ? early
      : readProject(kv, auditId, accountId, audit.projectId);
    early = undefined;
    const { projectEntry, project, prevId, previous, prevAudit, base: baseRead } = await reading;
    op.check(projectEntry);
    const base = state?.reuse ? baseRead : null;
    const comparable = prevAudit === null || sameAuditOptions(prevAudit.options, audit.options);
    const { issues, changes } = compareIssues(
      outcome.tallies,
      state?.stored ?? {},
      previous,
      previous ? prevId : null,
    );
    op.set(keys.auditIssues(auditId), issues);
    const done: AuditRecord = {
      ...audit,
      status: "completed",
      completedAt: now,
      score: report.score,
      summary: report.summary,
      jobsCompleted: report.jobs_completed,
      jobsFailed: report.jobs_failed,
      inStep: false,
      changes,
      limitsHit: outcome.limitsHit ?? {},
      crawl: {
        complete: !outcome.truncated,
        unfetched: outcome.unfetched ?? 0,
        reused: state?.reuse?.reused ?? 0,
      },
      ...(outcome.scopeLeftOut ? { scopeLeftOut: outcome.scopeLeftOut } : {}),
      ...(outcome.politeness ? { politeness: outcome.politeness } : {}),
      ...(audit.render && state?.post?.render
        ? { renderStats: renderTotals(state.post.render) }
        : {}),
    };
    op.set(keys.audit(accountId, auditId), done);
    if (state?.reuse) {
      // The project's stored page facts are this audit's now, and the older audit's go. Without
      // a project nothing will read this audit's: they go too, marked a millisecond after the
      // audit's own marker (`AUDIT_JOB.onFinish`) so the two never share a key.
      if (base && project) {
        op.check(base).set(base.key, { auditId, fp: state.reuse.fp });
        if (base.value && base.value.auditId !== auditId) {
          markForPruning(op, base.value.auditId, "reuse", now);
        }
      } else {
        markForPruning(op, auditId, "reuse", now + 1);
      }
    }
    if (project) {
      op.set(projectEntry.key, {
        ...project,
        latestAudit: {
          audit_id: auditId,
          status: "completed",
          completed_at: new Date(now).toISOString(),
          score: report.score,
          summary: report.summary,
        },
      });
      if (!isScoped(audit.options)) {
        op.set(keys.siteFacts(project.id), {
          host: report.site.host,
          language: report.site.language,
          pages: report.site.pages.slice(0, MAX_FACT_PAGES).map((p) => ({
            url: p.url.slice(0, 300),
            title: clip(p.title, 120),
            h1: clip(p.h1, 120),
            description: clip(p.description, 200),
          })),
        });
      }
      // The events carry `changes` extended with the regression comparison (score and category
      // deltas, new critical and warning issues, fixed issues); `audit.regressed` is the same
      // payload, sent as well when the audit regressed.
      const regression = regressionOf(project, changes.previous_audit_id, {
        auditId,
        score: report.score,
        categories: report.summary.categories,
      }, issues.issues);
      const data = {
        project_id: project.id,
        project_name: project.name,
        status: "completed",
        jobs_completed: report.jobs_completed,
        jobs_failed: report.jobs_failed,
        completed_at: new Date(now).toISOString(),
        audit_id: auditId,
        scheduled: triggerOf(audit) === "schedule",
        changes: { ...changes, ...regression },
      };
      recordEvent(op, deps.queue, { accountId, event: "audit.completed", now, data });
      if (regression.regressed && comparable) {
        recordEvent(op, deps.queue, { accountId, event: "audit.regressed", now, data });
      }
    }
    return "completed";
  }, { projectId: known?.record.projectId, known: known?.latest, active: ahead?.active });
}
