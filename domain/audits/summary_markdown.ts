/**
 * A completed audit in at most SUMMARY_MAX_BYTES of Markdown, for an agent to paste into a chat or
 * a pull request: the score and category scores with their change since the project's previous
 * completed audit, new / fixed / persisting issues, "Fix first": the five findings with the
 * largest impact × √reach with their reach, impact, effort and fix (one line each, texts from
 * check_docs.ts; the same list as the summary's `fix_first`), the share link when the caller has
 * one, and the
 * link to the JSON audit. The cap is enforced here whatever the inputs hold (a project name of
 * any length, long fix texts): lines are clipped, the "Fix first" list shortened, and the whole
 * cut at a line as a last resort, always keeping the links.
 *
 * @module
 */
import { CHECKS_BY_ID, clipUtf8, type FixFirstItem, IMPACT_NAMES } from "../audit_engine/mod.ts";
import { CATEGORIES, type Category } from "../audit_engine/types.ts";
import { ApiError, type Deps, keys, read } from "../platform/mod.ts";
import type { KeyMode } from "../identity/types.ts";
import type { ProjectRecord } from "../projects/types.ts";
import { auditFixFirst, type StoredIssue } from "./compare.ts";
import { type AuditRecord, getAudit } from "./record.ts";

/** The hard cap of a summary, in UTF-8 bytes. */
export const SUMMARY_MAX_BYTES = 2_048;
/** "Fix first" items listed, at most. */
export const SUMMARY_TOP_ISSUES = 5;

/** Links the summary carries beyond the audit's own: the share link, when one exists. */
export interface SummaryLinks {
  /** A share link of the audit's report the caller may hand out; null when there is none. */
  shareUrl: string | null;
}

/** What the summary is made of (read by `auditSummaryMarkdown`, or given by a test). */
export interface SummaryInput {
  audit: AuditRecord;
  project: Pick<ProjectRecord, "name" | "url"> | null;
  previous: AuditRecord | null;
  /** The audit's stored issues, worst first, then the fixed ones (compare.ts). */
  issues: StoredIssue[];
  baseUrl: string;
  links: SummaryLinks;
}

/** The summary of a completed audit of the caller; 404 for another's, 409 before completion. */
export async function auditSummaryMarkdown(
  deps: Deps,
  caller: { accountId: string; mode: KeyMode },
  auditId: string,
  links: SummaryLinks,
): Promise<string> {
  const audit = await getAudit(deps, caller.accountId, auditId, caller.mode);
  if (audit.status !== "completed") {
    throw new ApiError(
      "invalid_state",
      `Audit '${auditId}' is ${audit.status}; its summary is written once it is completed`,
    );
  }
  const previousId = audit.changes?.previous_audit_id ?? null;
  const [project, previous, stored] = await Promise.all([
    read(deps.kv, keys.project(audit.accountId, audit.projectId)),
    previousId ? read(deps.kv, keys.audit(audit.accountId, previousId)) : null,
    read(deps.kv, keys.auditIssues(audit.id)),
  ]);
  return renderSummary({
    audit,
    project: project.value,
    previous: previous?.value?.status === "completed" ? previous.value : null,
    issues: stored.value?.issues ?? [],
    baseUrl: deps.config.publicBaseUrl,
    links,
  });
}

const CATEGORY_NAMES: Record<Category, string> = {
  performance: "Performance",
  security: "Security",
  indexability: "Indexability",
  mobile: "Mobile",
  structure: "Structure",
  agents: "Agents",
};

/** The Markdown of a completed audit, at most SUMMARY_MAX_BYTES bytes. */
export function renderSummary(input: SummaryInput): string {
  const { audit, previous, baseUrl } = input;
  const summary = audit.summary!;
  const name = input.project ? clip(input.project.name || input.project.url, 60) : audit.projectId;
  const site = input.project && input.project.url !== input.project.name
    ? ` (${clip(input.project.url, 80)})`
    : "";
  const urls = audit.jobsCompleted + audit.jobsFailed;
  const caps = Object.keys(audit.limitsHit ?? {});
  const head = [
    `## SEO audit: ${md(name)}${md(site)}`,
    `**Score ${audit.score}/100**${delta(audit.score, previous?.score)} · ` +
    `${day(audit.completedAt)} · ${n(urls)} URLs fetched` +
    (caps.length ? ` · caps hit: ${md(clip(caps.join(", "), 120))}` : ""),
    "",
    // Audits completed before the `agents` category existed have only the first five.
    CATEGORIES.filter((c) => typeof summary.categories[c] === "number").map((c) =>
      `${CATEGORY_NAMES[c]} ${summary.categories[c]}` +
      delta(summary.categories[c], previous?.summary?.categories[c])
    ).join(" · "),
    "",
    ...partialLines(audit, baseUrl),
    changesLine(audit),
    ...fixedLine(input.issues),
    `Findings: ${n(summary.issues_critical)} critical, ${n(summary.issues_warning)} warning, ` +
    `${n(summary.issues_info)} info.`,
  ];
  const fired = input.issues.filter((i) => i.change !== "fixed");
  const issueLines = auditFixFirst(summary, input.issues).slice(0, SUMMARY_TOP_ISSUES)
    .map((i, n) => fixLine(i, n + 1));
  const tail = [
    "",
    ...(input.links.shareUrl ? [`Report: ${clip(input.links.shareUrl, 300)}`] : []),
    `Full audit (JSON): ${baseUrl}/v1/audits/${audit.id}`,
  ];
  const build = (shown: string[]) => [
    ...head,
    "",
    shown.length
      ? `**Fix first** (${shown.length} of ${fired.length} issues; by impact × reach)`
      : fired.length
      ? `No issue costs much in search (${fired.length} minor ones).`
      : "No issues found.",
    ...shown,
    ...tail,
  ];
  // The list gives way first: whole issue lines, from the least bad, until the rest fits.
  let lines = build(issueLines);
  while (issueLines.length > 1 && bytes(lines.join("\n") + "\n") > SUMMARY_MAX_BYTES) {
    issueLines.pop();
    lines = build(issueLines);
  }
  return capped(lines);
}

/** The lines joined, cut at a line boundary (the links kept) if they still pass the cap. */
function capped(lines: string[]): string {
  const text = lines.join("\n") + "\n";
  if (bytes(text) <= SUMMARY_MAX_BYTES) return text;
  const link = lines[lines.length - 1] + "\n";
  const room = SUMMARY_MAX_BYTES - bytes(link) - bytes("…\n");
  const kept = clipUtf8(lines.slice(0, -1).join("\n"), room);
  const cut = kept.lastIndexOf("\n");
  return `${cut > 0 ? kept.slice(0, cut) : kept}\n…\n${link}`;
}

/** The budgets whose stop a reader must know about, in words (caps.ts STOPPING_CAPS). */
const BUDGET_WORDS: Partial<Record<string, string>> = {
  pages: "page budget",
  bytes: "byte budget",
  duration: "time budget (s)",
  error_rate: "error-rate stop (the site kept failing)",
};

/**
 * A crawl a budget cut short says so before any finding, with what it left out, and the trial's
 * way out (nothing when the crawl was complete).
 */
function partialLines(audit: AuditRecord, baseUrl: string): string[] {
  const stops = Object.entries(audit.limitsHit ?? {}).filter(([c]) => BUDGET_WORDS[c]);
  if (stops.length === 0) return [];
  const trial = audit.funding.kind === "sandbox";
  const parts = stops.map(([c, h]) => {
    const whose = c === "error_rate" ? "the " : trial ? "the trial's " : "the plan's ";
    return `${whose}${BUDGET_WORDS[c]} (${n(h!.limit)}): ${n(h!.leftOut)} URLs not fetched`;
  });
  return [
    `**Partial crawl**: ${parts.join("; ")}. Findings cover the pages crawled.` +
    (trial && stops.some(([c]) => c !== "error_rate")
      ? ` Upgrade for the plan's budget: POST /v1/upgrades (pricing: ${baseUrl}/pricing).`
      : ""),
    "",
  ];
}

function changesLine(audit: AuditRecord): string {
  const c = audit.changes;
  if (!c || c.previous_audit_id === null) return "First audit of this project: nothing to compare.";
  return `Since the previous audit (${clip(c.previous_audit_id, 40)}): ${c.new} new, ` +
    `${c.fixed} fixed, ` +
    `${c.persisting} persisting issues.`;
}

/** The checks fixed since the previous audit, by title (a line only when there are some). */
function fixedLine(issues: StoredIssue[]): string[] {
  const fixed = issues.filter((i) => i.change === "fixed")
    .map((i) => CHECKS_BY_ID.get(i.check)?.title ?? i.check);
  return fixed.length ? [`Fixed: ${md(clip(fixed.join("; "), 160))}`] : [];
}

/** One "Fix first" item: title, reach, impact, effort and the fix, on one line. */
function fixLine(item: FixFirstItem, rank: number): string {
  return `${rank}. **${md(clip(item.title, 80))}**: ${n(item.affected_count)} of ` +
    `${n(item.eligible_count)} affected · impact ${IMPACT_NAMES[item.impact]} · ` +
    `effort ${item.effort}. Fix: ${md(clip(item.fix, 150))}`;
}

/** ` (+3)`, ` (−2)`, ` (=)`; nothing without a previous value. */
function delta(now: number | null | undefined, before: number | null | undefined): string {
  if (now === null || now === undefined || before === null || before === undefined) return "";
  const d = now - before;
  return d === 0 ? " (=)" : d > 0 ? ` (+${d})` : ` (−${-d})`;
}

/** 12,345 */
function n(value: number): string {
  return value.toLocaleString("en-US");
}

function day(at: number | null): string {
  return at === null ? "" : new Date(at).toISOString().slice(0, 10);
}

/** `s` on one line, at most `max` characters (an ellipsis marks a cut). */
function clip(s: string, max: number): string {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length <= max ? line : line.slice(0, max - 1) + "…";
}

/**
 * Text that Markdown shows as written: no links, images, HTML, code spans or bold from it (`_`
 * is left alone: ids and snake_case words read better, and inside a word it emphasises nothing).
 */
function md(s: string): string {
  return s.replace(/[\\`*[\]<>]/g, (c) => `\\${c}`);
}

function bytes(s: string): number {
  return new TextEncoder().encode(s).length;
}
