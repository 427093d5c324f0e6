/**
 * The render steps of a rendered audit (run by post_steps.ts after the raw crawl), in rounds:
 *
 * 1. pick: the round's sample from the stored link graph and records (round 1: every fetched HTML
 *    2xx page, the home page first; later rounds: the pages the round's crawl fetched), within
 *    what is left of `RENDER_MAX_PAGES` / `RENDER_LAB_PAGES`; the sample is stored as a blob;
 * 2. render: a few pages per step; each page's checks join the crawl's tallies and findings, a
 *    lab page's figures go on its record (`lab`), the anchors of its DOM join the page's stored
 *    anchors (anchors.ts, for broken_fragment), and the internal links (and frame sources) of
 *    its rendered DOM are handed to the frontier like the served HTML's (same scope: followable
 *    same-site links of a page that is not nofollow; same caps), marked `discoveredBy: "render"`
 *    on the records of URLs nothing had queued before;
 * 3. when the round's sample is rendered and it queued URLs, the crawl phase runs again on them
 *    (same page budget, byte budget, deadline, robots.txt and address guard as any fetch), then
 *    the next round renders what that crawl fetched; at most `maxRounds` rounds. URLs queued by
 *    the last round (or when a budget is spent) stay queued: the crawl is partial
 *    (`truncated`), the rounds cap noted in `limits_hit` as `render_rounds`.
 *
 * Every step's progress is in `CrawlState.post.render`, committed with the step: a step that dies
 * is repeated (its writes are idempotent, and URLs it found are only seen once a committed state
 * covers them).
 *
 * @module
 */
import type { Evidence, RenderProgress } from "../types.ts";
import { keys } from "../../platform/mod.ts";
import { labRecord } from "../lab.ts";
import { isNofollowPage } from "../checks/helpers.ts";
import { siteKeyOf } from "../page_facts.ts";
import { browserUserAgent } from "../user_agents.ts";
import {
  evaluateRenderedPage,
  type PageRenderer,
  pickRenderSample,
  RenderFailedError,
  type RenderResult,
  type SampleCandidate,
  templateKey,
} from "../../render/mod.ts";
import { JobFailure } from "../../platform/mod.ts";
import type { ByteBudget } from "./byte_budget.ts";
import { addRenderedAnchors } from "./anchors.ts";
import { capsOf, noteCap } from "./caps.ts";
import { Frontier } from "./frontier.ts";
import { budgetStop, noteStop } from "./stops.ts";
import type { CrawlInput, CrawlState } from "./state.ts";
import {
  FindingsWriter,
  getMany,
  type LabFigures,
  listInPages,
  type PageRecord,
  readBlob,
  urlHash,
  type WriteBatch,
  writeBlob,
} from "./store.ts";

/** A rendered audit whose browser cannot start (the audit fails with this code, refunded). */
export function renderingUnavailable(message: string): JobFailure {
  return new JobFailure("rendering_unavailable", message);
}

/** Render rounds of one audit unless the plan says otherwise (`RENDER_MAX_ROUNDS`). */
export const DEFAULT_RENDER_ROUNDS = 5;

/** How the render steps run: the renderer and the pages one step renders. */
export interface RenderPlan {
  renderer: PageRenderer | null;
  /** Pages rendered per audit, over all rounds. */
  maxPages: number;
  /** Of them, pages rendered in lab conditions. */
  labPages: number;
  /** Pages rendered per step (concurrently, the pool caps pages in flight). */
  pagesPerStep: number;
  /**
   * Render rounds per audit (default DEFAULT_RENDER_ROUNDS): round 1 after the raw crawl, each
   * further one after a crawl of the URLs the round before found. 1: rendered links are queued
   * but never crawled.
   */
  maxRounds?: number;
}

export type { RenderProgress };

/** The render figures an audit reports (`render` on the audit). */
export interface RenderTotals {
  pages_rendered: number;
  lab_pages: number;
  pages_failed: number;
  pages_discovered: number;
  rounds: number;
}

/** Candidates kept for sampling (the most linked HTML pages); documented in docs/render.md. */
const MAX_CANDIDATES = 2_000;
/** URLs longer than this are left out of the sample (the sample is one small stored value). */
const MAX_SAMPLE_URL = 500;

/** A fresh round 1, its sample to be picked. */
export function firstRound(): Required<RenderProgress> {
  return {
    lab: 0,
    total: 0,
    next: 0,
    rendered: 0,
    failed: 0,
    round: 1,
    pending: true,
    from: 0,
    sampled: 0,
    labSampled: 0,
    discovered: 0,
    labTemplates: [],
    over: false,
  };
}

/** The progress with every field, for states written before rounds (one round, sample picked). */
function complete(r: RenderProgress): Required<RenderProgress> {
  r.round ??= 1;
  r.pending ??= false;
  r.from ??= 0;
  r.sampled ??= r.total;
  r.labSampled ??= r.lab;
  r.discovered ??= 0;
  r.labTemplates ??= [];
  r.over ??= false;
  return r as Required<RenderProgress>;
}

/** What a completed rendered audit reports of its render steps. */
export function renderTotals(r: RenderProgress): RenderTotals {
  return {
    pages_rendered: r.rendered,
    lab_pages: r.labSampled ?? r.lab,
    pages_failed: r.failed,
    pages_discovered: r.discovered ?? 0,
    rounds: r.round ?? 1,
  };
}

/** The stored sample of a round (round 1 keeps the name it had before rounds). */
const sampleBlob = (round: number) => round === 1 ? "render sample" : `render sample ${round}`;

function tally(state: CrawlState, id: string, eligible: number, affected: number): void {
  const t = state.tallies[id] ?? [0, 0];
  state.tallies[id] = [t[0] + eligible, t[1] + affected];
}

/** Where a render step runs: the audit, its state and step batch, the clock. */
export interface RenderStepContext {
  kv: Deno.Kv;
  auditId: string;
  input: CrawlInput;
  state: CrawlState;
  batch: WriteBatch;
  plan: RenderPlan;
  budget: ByteBudget;
  now: () => number;
}

/**
 * Takes one render step if one is due: true when it did (the caller commits the state and comes
 * back; the phase may be `crawl` again), false when the render steps are over.
 */
export async function runRenderStep(c: RenderStepContext): Promise<boolean> {
  const post = c.state.post!;
  post.render ??= firstRound();
  const r = complete(post.render);
  if (r.over) return false;
  if (r.pending) {
    await pickSample(c, r);
    return true;
  }
  if (r.next < r.total) {
    await renderBatch(c, r);
    return true;
  }
  if (nextRound(c, r)) return true;
  r.over = true;
  return false;
}

/** After a round: crawl what it queued (another round follows), or end the render steps. */
function nextRound(c: RenderStepContext, r: Required<RenderProgress>): boolean {
  const { state, input, plan } = c;
  const queued = state.tail - state.head;
  if (queued <= 0) return false;
  const stop = budgetStop(input, state, c.budget, c.now());
  const budgetLeft = stop === null;
  const maxRounds = Math.max(1, plan.maxRounds ?? DEFAULT_RENDER_ROUNDS);
  if (budgetLeft && r.round < maxRounds) {
    r.round++;
    r.pending = true;
    r.from = state.head;
    r.lab = r.total = r.next = 0;
    state.phase = "crawl";
    return true;
  }
  // Found and never fetched: the crawl is partial, as when a budget leaves links queued.
  state.truncated = true;
  if (budgetLeft) noteCap(state.capsHit ??= {}, "render_rounds", maxRounds, queued);
  else noteStop(state, stop, queued);
  return false;
}

/** Picks and stores the round's sample within what is left of the render caps. */
async function pickSample(c: RenderStepContext, r: Required<RenderProgress>): Promise<void> {
  const renderCap = Math.max(0, c.plan.maxPages - r.sampled);
  const labCap = Math.max(0, Math.min(c.plan.labPages, c.plan.maxPages) - r.labSampled);
  const taken = new Set(r.labTemplates);
  const sample = renderCap === 0
    ? { lab: [], all: [] }
    : await selectSample(c, r.round === 1, r.from, { labCap, renderCap }, taken);
  writeBlob(c.batch, c.auditId, sampleBlob(r.round), JSON.stringify(sample.all));
  for (const u of sample.lab) taken.add(urlHash(templateKey(u)));
  r.labTemplates = [...taken];
  r.lab = sample.lab.length;
  r.total = sample.all.length;
  r.next = 0;
  r.sampled += sample.all.length;
  r.labSampled += sample.lab.length;
  r.pending = false;
}

/** Renders the next pages of the round's sample and records what they showed. */
async function renderBatch(c: RenderStepContext, r: Required<RenderProgress>): Promise<void> {
  const { kv, auditId, state, batch, plan } = c;
  const all = JSON.parse(await readBlob(kv, auditId, sampleBlob(r.round))) as string[];
  const from = r.next;
  const to = Math.min(r.total, from + Math.max(1, plan.pagesPerStep));
  const urls = all.slice(from, to);
  // The browser asks as the raw crawl asked: the audit's User-Agent preset, in Chrome's form.
  const userAgent = browserUserAgent(c.input.userAgent);
  const results = await Promise.all(
    urls.map(async (url, k) => {
      try {
        return await plan.renderer!.render(url, from + k < r.lab, userAgent);
      } catch (e) {
        if (e instanceof RenderFailedError && (e.kind === "unavailable" || e.kind === "closed")) {
          throw renderingUnavailable(e.message);
        }
        return null; // timeout, crash, navigation error: counted, not fatal
      }
    }),
  );
  const findings = new FindingsWriter(batch, auditId, state.stored);
  const records = await getMany(kv, urls.map((u) => keys.auditPage(auditId, u)));
  const caps = capsOf(c.input);
  const frontier = new Frontier(kv, auditId, state, batch, caps, c.input.maxPages);
  const anchored: { url: string; facts: RenderResult["rendered"] }[] = [];
  results.forEach((res, k) => {
    if (res === null) {
      r.failed++;
      return;
    }
    r.rendered++;
    anchored.push({ url: urls[k], facts: res.rendered });
    // The audit's list of lab pages (reports/lab.ts): the report reads it without the inventory.
    if (res.lab) batch.set(keys.auditLab(auditId, urls[k]), labRecord(urls[k], res.lab));
    const fired = recordRender(res, state, findings, c.input.now);
    const rec = records[k];
    if (!rec) return;
    const lab = labFigures(res);
    if (fired.length > 0 || lab) {
      const next: PageRecord = { ...rec, checks: [...new Set([...rec.checks, ...fired])] };
      if (lab) next.lab = lab;
      batch.set(keys.auditPage(auditId, rec.url), next);
    }
    const depth = rec.depth < 0 ? -1 : rec.depth + 1;
    for (const url of renderedTargets(res, state.siteKey, caps.linksPerPage)) {
      frontier.discover(url, depth, 0, "render");
    }
  });
  await addRenderedAnchors(kv, batch, auditId, anchored);
  const tail = state.tail;
  await frontier.allocate();
  r.discovered += state.tail - tail;
  r.next = to;
}

/**
 * The URLs a rendered page leads to, by the raw crawl's rules (page_recorder.ts): its followable
 * same-site links (at most `perPage`) unless the page is nofollow as served or as rendered, and
 * its same-site frame sources whatever the page's nofollow.
 */
function renderedTargets(res: RenderResult, siteKey: string, perPage: number): string[] {
  const headers = res.rawHeaders ?? new Headers();
  const nofollow = isNofollowPage(res.rendered.robotsMeta, headers) ||
    (res.raw !== null && isNofollowPage(res.raw.robotsMeta, headers));
  const out = nofollow ? [] : res.rendered.links.slice(0, perPage);
  out.push(...res.rendered.frames);
  return out.filter((u) => {
    try {
      return siteKeyOf(new URL(u)) === siteKey;
    } catch {
      return false;
    }
  });
}

/** A lab render's figures for the page inventory; null for a render without lab metrics. */
function labFigures(res: RenderResult): LabFigures | null {
  if (!res.lab) return null;
  return {
    lcpMs: res.lab.lcpMs,
    cls: res.lab.cls,
    tbtMs: res.lab.tbtMs,
    bytes: res.lab.transferBytes,
    requests: res.lab.requests,
  };
}

function recordRender(
  res: RenderResult,
  state: CrawlState,
  findings: FindingsWriter,
  now: number,
): string[] {
  const { eligible, findings: found } = evaluateRenderedPage({ result: res, now });
  for (const id of eligible) tally(state, id, 1, 0);
  for (const f of found) {
    tally(state, f.check.id, 0, 1);
    findings.add(f.check.id, res.url, [f.evidence as Evidence]);
  }
  return found.map((f) => f.check.id);
}

/**
 * The most linked fetched HTML 2xx pages (round 1: every one, the home page first; later rounds:
 * those at frontier positions from `from`, the ones that round's crawl fetched), from the stored
 * records and links.
 */
async function selectSample(
  c: RenderStepContext,
  firstRound: boolean,
  from: number,
  caps: { labCap: number; renderCap: number },
  labTaken: ReadonlySet<number>,
) {
  const { kv, auditId, state } = c;
  const inlinks = new Map<number, number>();
  for await (
    const page of listInPages(kv, keys.auditLinksAll(auditId))
  ) {
    for (const e of page) {
      const { t, f } = e.value;
      for (let i = 0; i < f && i < t.length; i++) inlinks.set(t[i], (inlinks.get(t[i]) ?? 0) + 1);
    }
  }
  let candidates: SampleCandidate[] = [];
  let home: string | null = null;
  let startTarget: string | null = null;
  for await (const page of listInPages(kv, keys.auditPages(auditId))) {
    for (const { value: r } of page) {
      if (r.url === state.startUrl && r.location !== null) startTarget = r.location;
      if (r.state !== "fetched" || !r.html || r.status < 200 || r.status >= 300) continue;
      if (r.url.length > MAX_SAMPLE_URL || r.seq < from) continue;
      if (r.url === state.startUrl) home = r.url;
      candidates.push({ url: r.url, inlinks: inlinks.get(r.hash) ?? 0 });
      if (candidates.length > 2 * MAX_CANDIDATES) candidates = top(candidates);
    }
  }
  if (!firstRound) home = null;
  else if (home === null && startTarget !== null && candidates.some((c) => c.url === startTarget)) {
    home = startTarget;
  }
  return pickRenderSample(home, top(candidates), caps, (t) => labTaken.has(urlHash(t)));
}

function top(c: SampleCandidate[]): SampleCandidate[] {
  return c.sort((a, b) => b.inlinks - a.inlinks || (a.url < b.url ? -1 : 1))
    .slice(0, MAX_CANDIDATES);
}
