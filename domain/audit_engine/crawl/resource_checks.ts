/**
 * Checking the same-site resources pages load (`broken_resources`): images, scripts,
 * stylesheets, fonts, media and embeds on the site's own host (www. ignored).
 *
 * As the crawl goes, each page's references are stored with the page (`audit_embeds/<page>`:
 * hashed URLs and the element of each, one small value) and each distinct resource URL is queued
 * once (`audit_resources/<url>` holds its position, `audit_resource_queue/<seq>` the URL), like
 * the frontier: a URL counts as queued only once a committed state covers its position, so a
 * step that died leaves nothing half-trusted. At most `caps.resources` distinct resources are
 * queued per audit (`CRAWL_MAX_RESOURCES`); what a step meets past that is noted in `limits_hit`
 * as `resources`, and a page's references past MAX_RESOURCES_PER_PAGE as `resources_per_page`.
 *
 * After the crawl, the post-crawl steps check the queue in batches (`checkResourceBatch`): robots
 * rules of the resource's origin honoured (a disallowed resource is not fetched and not judged),
 * the host's politeness pace kept (politeness.ts: a 429, or a 503 with Retry-After, slows the host
 * down and leaves that resource unjudged, never retried), HEAD with a GET fallback (fetcher.ts `fetchResourceStatus`), the answer
 * written back to `audit_resources/<url>`. The site-wide pass (finalize/resources.ts) joins the
 * answers with each page's references. Memory: one step's resources, never the site's.
 *
 * Frame sources are stored with the page's references too, but are not queued here: they are
 * crawled as pages, and their records answer for them.
 *
 * @module
 */
import type { EmbedsValue, ResourceProgress, ResourceRecord } from "../types.ts";
import { keys } from "../../platform/mod.ts";
import { TargetRefusedError } from "../../net/mod.ts";
import { FRAME_KINDS } from "../resources.ts";
import type { PageFacts } from "../page_facts.ts";
import { BudgetSpentError } from "./byte_budget.ts";
import { type CapHit, type CapName, noteCap } from "./caps.ts";
import { failureKind, fetchResourceStatus, type FetchSettings } from "./fetcher.ts";
import type { Politeness } from "./politeness.ts";
import type { RobotsSource } from "./robots_source.ts";
import { getMany, urlHash, type WriteBatch } from "./store.ts";

export type { ResourceProgress };

export type { EmbedsValue, ResourceRecord };

/** Resources checked per step at most (each step also stops at its time limit). */
export const RESOURCES_PER_STEP = 200;

/** Stores a page's same-site references (frames included) with the page. */
export function writeEmbeds(
  batch: WriteBatch,
  auditId: string,
  pageUrl: string,
  facts: Pick<PageFacts, "resourceUrls" | "resourceKinds">,
): void {
  if (facts.resourceUrls.length === 0) return;
  batch.set(
    keys.auditEmbeds(auditId, pageUrl),
    {
      t: facts.resourceUrls.map(urlHash),
      e: facts.resourceKinds,
    } satisfies EmbedsValue,
  );
}

/** The resource queue of one audit, for the length of one crawl step. */
export class ResourceQueue {
  private found: string[] = [];
  private reading: { distinct: string[]; known: Promise<(ResourceRecord | null)[]> } | null = null;

  constructor(
    private readonly kv: Deno.Kv,
    private readonly auditId: string,
    private readonly progress: ResourceProgress,
    private readonly batch: WriteBatch,
    private readonly cap: number,
    private readonly hits: Partial<Record<CapName, CapHit>>,
  ) {}

  /** Notes the resources a page loads (frame sources are crawled, not queued). */
  discover(facts: Pick<PageFacts, "resourceUrls" | "resourceKinds">): void {
    if (this.cap <= 0) return;
    facts.resourceUrls.forEach((u, i) => {
      if (!FRAME_KINDS.has(facts.resourceKinds[i])) this.found.push(u);
    });
  }

  /**
   * Starts reading the records of the resources found so far: the caller allocates its frontier
   * meanwhile (a round trip each on a remote KV), then `allocate` uses what this read. Nothing
   * else writes those records in between: the answer is the same as read later.
   */
  read(): void {
    const distinct = [...new Set(this.found)];
    this.found = [];
    const known = distinct.length === 0 ? Promise.resolve([]) : getMany<ResourceRecord>(
      this.kv,
      distinct.map((u) => keys.auditResource(this.auditId, u)),
    );
    known.catch(() => {}); // awaited by `allocate`; a step that fails first leaves it behind
    this.reading = { distinct, known };
  }

  /**
   * Queues the resources found this step, each URL once per audit, in the order found; past the
   * cap nothing is queued and each distinct URL left out is noted (once per step).
   */
  async allocate(): Promise<void> {
    if (!this.reading) this.read();
    const { distinct, known: knownRead } = this.reading!;
    this.reading = null;
    if (distinct.length === 0) return;
    const p = this.progress;
    const known = await knownRead;
    const committedTail = p.tail;
    let leftOut = 0;
    distinct.forEach((url, i) => {
      const rec = known[i];
      if (rec !== null && rec.seq < committedTail) return; // queued by a committed step
      if (p.tail >= this.cap) {
        leftOut++;
        return;
      }
      const seq = p.tail++;
      this.batch.set(keys.auditResource(this.auditId, url), { seq } satisfies ResourceRecord);
      this.batch.set(keys.auditResourceQueue(this.auditId, seq), url);
    });
    if (leftOut > 0) noteCap(this.hits, "resources", this.cap, leftOut);
  }
}

/** What checking a resource needs from the crawl. */
export interface ResourceCheckContext {
  kv: Deno.Kv;
  auditId: string;
  settings: FetchSettings;
  robots: RobotsSource;
  politeness: Politeness;
  concurrency: number;
  /** `performance.now()` after which no further resource is taken this step. */
  stopAt: number;
  /** The audit's deadline has passed: nothing more is fetched. */
  pastDeadline: () => boolean;
  hits: Partial<Record<CapName, CapHit>>;
  byteLimit: number | undefined;
}

/** Checks the next batch of queued resources; returns false when none was left to check. */
export async function checkResourceBatch(
  p: ResourceProgress,
  batch: WriteBatch,
  ctx: ResourceCheckContext,
): Promise<boolean> {
  if (p.checked >= p.tail) return false;
  if (ctx.pastDeadline()) {
    p.unchecked += p.tail - p.checked;
    p.checked = p.tail;
    return true;
  }
  const urls: { seq: number; url: string }[] = [];
  for await (
    const e of ctx.kv.list<string>({
      start: keys.auditResourceQueue(ctx.auditId, p.checked),
      end: keys.auditResourceQueue(ctx.auditId, Math.min(p.tail, p.checked + RESOURCES_PER_STEP)),
    })
  ) urls.push({ seq: e.key[2] as number, url: e.value });
  let next = 0;
  let written = 0;
  let spent = false;
  // Positions up to the first one whose politeness slot fell beyond the step count as checked.
  let deferredAt = -1;
  const deadline = Date.now() + (ctx.stopAt - performance.now());
  const worker = async () => {
    while (!spent && deferredAt < 0 && next < urls.length) {
      if (performance.now() > ctx.stopAt || ctx.pastDeadline()) return;
      const i = next++;
      const { seq, url } = urls[i];
      const rec = await checkOne(url, seq, ctx, deadline);
      if (rec === "spent") {
        spent = true;
        return;
      }
      if (rec === "deferred") {
        if (deferredAt < 0 || i < deferredAt) deferredAt = i;
        return;
      }
      batch.set(keys.auditResource(ctx.auditId, url), rec);
      written++;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(ctx.concurrency, 32)) }, worker));
  if (spent) {
    // The byte budget is spent: nothing more can be checked this audit.
    const left = p.tail - p.checked - written;
    p.unchecked += left;
    if (ctx.byteLimit !== undefined) noteCap(ctx.hits, "bytes", ctx.byteLimit, left);
    p.checked = p.tail;
  } else {
    // Workers finish every position they take: the first `next` are checked (those after a
    // deferred one are checked again by the next step, their answers written again).
    p.checked += deferredAt >= 0 ? deferredAt : next;
  }
  return true;
}

/**
 * Checks one resource; "spent" when the byte budget had nothing left for it, "deferred" when its
 * host's politeness slot falls beyond the step (`deadline`, epoch ms).
 */
async function checkOne(
  url: string,
  seq: number,
  ctx: ResourceCheckContext,
  deadline: number,
): Promise<ResourceRecord | "spent" | "deferred"> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { seq, r: "skip" };
  }
  const robots = await ctx.robots.for(u.origin);
  if (!robots.isAllowed(url)) return { seq, r: "skip" }; // not fetched, not judged
  if (!(await ctx.politeness.wait(u.host, robots.crawlDelay, deadline))) return "deferred";
  const startedAt = Date.now();
  try {
    const a = await fetchResourceStatus(ctx.settings, url);
    // A rate limit says nothing about the resource; it slows the host down.
    if (a.throttleMs !== null) {
      ctx.politeness.throttle(a.host, a.throttleMs, startedAt);
      return { seq, r: "skip", s: a.status };
    }
    if (a.status === 429) return { seq, r: "skip", s: a.status };
    return { seq, r: a.status >= 400 ? "broken" : "ok", s: a.status, f: null };
  } catch (e) {
    if (e instanceof BudgetSpentError) return "spent";
    // A refusal is the address guard's (a host that resolves privately), not the resource's.
    if (e instanceof TargetRefusedError && e.reason !== "dns_failure") return { seq, r: "skip" };
    return { seq, r: "broken", s: 0, f: failureKind(e) };
  }
}
