/**
 * Page groups (issue 31 §2): a completed audit's URLs split by URL pattern, so the inventory,
 * the issues and the exports can be read per template (`/blog/**`, `/product/**`), as crawler
 * tools call segments.
 *
 * Which groups: the caller's own (`groups` in the audit options: name and path glob, the scope
 * patterns' rules, first match wins), or else the detected templates: every first path segment
 * that DETECT_MIN_PAGES or more URLs of the inventory share becomes the group `<segment>` with
 * the pattern `/<segment>/**` (which also matches `/<segment>` itself), the MAX_DETECTED largest.
 * A URL no group takes is in `other`. Every URL is in exactly one group.
 *
 * When: once, before the completing commit: the site-wide checks' last pass, which reads and
 * annotates every record, counts each into its group as it leaves it (`GroupCounter`, the job
 * layer's `FinalRecordSink`), and its writes commit with that step's; the detection's count of
 * first segments runs beside the passes before it (domain/audits/job.ts). A completion whose
 * last step ran elsewhere counts them in reads of its own (`computeGroups`): one read of the
 * records to count first segments (at most MAX_SEGMENTS_COUNTED distinct ones held), one more to
 * assign each URL. Either way each URL gets the index key `audit_group_pages/<group>/<url>` that
 * `?group=` reads in pages, and each group one small record with its page count and per-check
 * counts. Memory: the segment counts and the per-group counters, never a page. A repeated step or
 * completion (a process died in it) writes the same keys with the same values.
 *
 * @module
 */
import { keys, list } from "../platform/mod.ts";
import {
  compileGlob,
  type Glob,
  globMatches,
  listInPages,
  WriteBatch,
} from "../audit_engine/mod.ts";
import type { PageGroupDef, PageGroupRecord } from "./types.ts";

export type { PageGroupDef, PageGroupRecord };

/** Most groups a caller may name. */
export const MAX_GROUPS = 20;
/** Most detected groups (the largest). */
export const MAX_DETECTED = 20;
/** URLs that must share a first path segment for it to be a detected group. */
export const DETECT_MIN_PAGES = 3;
/** Distinct first segments counted; segments first met past this many are not counted. */
export const MAX_SEGMENTS_COUNTED = 10_000;
/** The group of the URLs no other group takes. */
export const OTHER_GROUP = "other";

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,59}$/;

/** Why a group name is refused, or null: 1 to 60 letters, digits, `_`, `.`, `-`; not `other`. */
export function groupNameProblem(name: string): string | null {
  if (!NAME.test(name)) {
    return "must be 1 to 60 letters, digits, _ . or -, starting with a letter or digit";
  }
  if (name === OTHER_GROUP) return `'${OTHER_GROUP}' is the group of the pages no group takes`;
  return null;
}

/** Assigns URLs to groups: the first group (in order) whose pattern matches, else `other`. */
export class GroupMatcher {
  private readonly globs: { name: string; glob: Glob }[];

  constructor(defs: readonly { name: string; pattern: string | null }[]) {
    this.globs = defs.filter((d) => d.pattern !== null).map((d) => ({
      name: d.name,
      glob: compileGlob(d.pattern!),
    }));
  }

  groupOf(url: string): string {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return OTHER_GROUP;
    }
    for (const g of this.globs) if (globMatches(g.glob, u)) return g.name;
    return OTHER_GROUP;
  }
}

/** The first path segment of a URL when it can name a group, else null. */
function firstSegment(url: string): string | null {
  const path = url.replace(/^[a-z]+:\/\/[^/]*/i, "");
  const m = /^\/([^/?#]+)/.exec(path);
  return m && NAME.test(m[1]) && m[1] !== OTHER_GROUP ? m[1] : null;
}

/**
 * The detected templates of an audit's inventory, largest first (ties by name). Its URLs are all
 * known once its crawl phase has ended (an audit that renders may still crawl in its render
 * steps): the job layer may start this while the site-wide passes run (`detectEarly`).
 */
export async function detectGroups(
  kv: Deno.Kv,
  auditId: string,
  splits?: readonly string[],
): Promise<PageGroupDef[]> {
  const counts = new Map<string, number>();
  for await (const page of listInPages(kv, keys.auditPages(auditId), 500, splits)) {
    for (const { value: r } of page) {
      const seg = firstSegment(r.url);
      if (seg === null) continue;
      const n = counts.get(seg);
      if (n !== undefined) counts.set(seg, n + 1);
      else if (counts.size < MAX_SEGMENTS_COUNTED) counts.set(seg, 1);
    }
  }
  return [...counts].filter(([, n]) => n >= DETECT_MIN_PAGES)
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, MAX_DETECTED)
    .map(([seg]) => ({ name: seg, pattern: `/${seg}/**` }));
}

/**
 * Counts an audit's records into its page groups and writes what `?group=` and the groups'
 * records read (see the module comment): each record's index key as it is seen (`see`), the
 * groups' records at the `end`. Every group gets a record, also one with no page (a caller's
 * pattern that matched nothing says so). Holds the per-group counters only.
 *
 * @example
 * ```ts
 * import { WriteBatch } from "../audit_engine/mod.ts";
 * declare const kv: Deno.Kv;
 * const batch = new WriteBatch(kv);
 * const groups = new GroupCounter("aud_1", [{ name: "blog", pattern: "/blog/**" }], "custom");
 * groups.see("https://example.com/blog/a", ["missing_title"], batch);
 * groups.end(batch);
 * await batch.flush();
 * ```
 */
export class GroupCounter {
  readonly #records = new Map<string, PageGroupRecord>();
  readonly #matcher: GroupMatcher;

  constructor(
    private readonly auditId: string,
    defs: readonly PageGroupDef[],
    source: "custom" | "detected",
  ) {
    defs.forEach((d, i) =>
      this.#records.set(d.name, {
        ...d,
        source,
        order: i,
        pages: 0,
        pagesWithIssues: 0,
        checks: {},
      })
    );
    this.#records.set(OTHER_GROUP, {
      name: OTHER_GROUP,
      pattern: null,
      source: "other",
      order: defs.length,
      pages: 0,
      pagesWithIssues: 0,
      checks: {},
    });
    this.#matcher = new GroupMatcher(defs);
  }

  /** Counts a record (its URL and the checks that hit it) and writes its index key. */
  see(url: string, checks: readonly string[], batch: WriteBatch): void {
    const name = this.#matcher.groupOf(url);
    const g = this.#records.get(name)!;
    g.pages++;
    if (checks.length > 0) g.pagesWithIssues++;
    for (const c of checks) g.checks[c] = (g.checks[c] ?? 0) + 1;
    batch.set(keys.auditGroupPage(this.auditId, name, url), true);
  }

  /** Every record was seen and the groups' records are written (in the batch). */
  ended = false;

  /** Writes every group's record, once every record was seen. */
  end(batch: WriteBatch): void {
    for (const g of this.#records.values()) batch.set(keys.auditGroup(this.auditId, g.name), g);
    this.ended = true;
  }
}

/**
 * The groups an audit is counted into: the caller's `custom` ones when given, else the detected
 * ones (`detected`, or a detection read now).
 */
export async function groupCounterOf(
  kv: Deno.Kv,
  auditId: string,
  custom: readonly PageGroupDef[] | undefined,
  detected?: Promise<PageGroupDef[]>,
  splits?: readonly string[],
): Promise<GroupCounter> {
  if (custom?.length) return new GroupCounter(auditId, custom, "custom");
  const defs = await (detected ?? detectGroups(kv, auditId, splits));
  return new GroupCounter(auditId, defs, "detected");
}

/**
 * Computes and stores an audit's page groups in a read of its records of its own (what the
 * site-wide checks' last pass did not count, `GroupCounter`): the caller's `custom` groups when
 * given, else the detected ones, and `other`. `splits`: where the records' keys are cut into
 * ranges read side by side (audit_engine `rangeSplits` of the crawl).
 */
export async function computeGroups(
  kv: Deno.Kv,
  auditId: string,
  custom: readonly PageGroupDef[] | undefined,
  detected?: Promise<PageGroupDef[]>,
  splits?: readonly string[],
): Promise<void> {
  const counter = await groupCounterOf(kv, auditId, custom, detected, splits);
  const batch = new WriteBatch(kv);
  // Index writes commit while the next pages are read (on a remote KV their round trips
  // overlap), a few at once: commits never pile up behind a fast read, and one that failed
  // stops the count there.
  for await (const page of listInPages(kv, keys.auditPages(auditId), 500, splits)) {
    for (const { value: r } of page) counter.see(r.url, r.checks, batch);
    await batch.paced();
  }
  counter.end(batch);
  await batch.flush();
}

/** An audit's stored groups in their order; empty for an audit completed before groups. */
export async function readGroups(kv: Deno.Kv, auditId: string): Promise<PageGroupRecord[]> {
  const out: PageGroupRecord[] = [];
  for await (const e of list(kv, { prefix: keys.auditGroupsAll(auditId) })) {
    out.push(e.value);
  }
  return out.sort((a, b) => a.order - b.order);
}
