/**
 * The steps after the crawl and before the site-wide checks (`finalize.ts`): agent-readiness
 * (one step: `/llms.txt` through the address guard, the AI crawlers' robots.txt rules,
 * structured-data coverage), the resource checks of broken_resources (resource_checks.ts, a
 * batch per step until the queue is checked) and, for a rendered audit, the render steps: the sample is picked
 * from the stored link graph (home page, top templates by inlinks, then the most linked pages;
 * `RENDER_MAX_PAGES` / `RENDER_LAB_PAGES`), then a few pages are rendered per step. Each step's
 * tallies and evidence join the crawl's (same stored findings, same scoring), and its progress
 * is in `CrawlState.post`, committed with the step like any other: a step that dies is repeated.
 *
 * @module
 */
import { keys } from "../../store.ts";
import { labRecord } from "../../reports/lab.ts";
import type { RenderFailedError } from "../../render/pool.ts";
import type { RenderResult } from "../../render/renderer.ts";
import { evaluateRenderedPage } from "../../render/checks.ts";
import type { PageRenderer } from "../../render/service.ts";
import { pickRenderSample, type SampleCandidate } from "../../render/sample.ts";
import { AI_CRAWLERS, llmsTxtProblems } from "../checks/agent.ts";
import type { Evidence } from "../types.ts";
import { failureKind, fetchText, isHtmlType, Politeness, settingsOf } from "./fetcher.ts";
import { capsOf, noteRobotsCaps } from "./caps.ts";
import { checkResourceBatch } from "./resource_checks.ts";
import { BudgetSpentError, type ByteBudget } from "./byte_budget.ts";
import { RobotsSource } from "./robots_source.ts";
import type { CrawlInput, CrawlState, StepLimits } from "./state.ts";
import { FindingsWriter, getMany, listInPages, readBlob, WriteBatch, writeBlob } from "./store.ts";

/** Progress of the post-crawl steps, kept in the crawl state. */
export interface PostCrawlState {
  agent: boolean;
  render: null | {
    lab: number;
    total: number;
    next: number;
    rendered: number;
    failed: number;
  };
}

/** A rendered audit whose browser cannot start (the audit fails with this code, refunded). */
export class RenderingUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RenderingUnavailableError";
  }
}

/** How the render steps run: the renderer and the pages one step renders. */
export interface RenderPlan {
  renderer: PageRenderer | null;
  maxPages: number;
  labPages: number;
  /** Pages rendered per step (concurrently, the pool caps pages in flight). */
  pagesPerStep: number;
}

const SAMPLE_BLOB = "render sample";
/** Candidates kept for sampling (the most linked HTML pages); documented in docs/render.md. */
const MAX_CANDIDATES = 2_000;
/** URLs longer than this are left out of the sample (the sample is one small stored value). */
const MAX_SAMPLE_URL = 500;

function tally(state: CrawlState, id: string, eligible: number, affected: number): void {
  const t = state.tallies[id] ?? [0, 0];
  state.tallies[id] = [t[0] + eligible, t[1] + affected];
}

/**
 * Takes one post-crawl step if one is due: true when it did (the caller commits the state and
 * comes back), false when the site-wide checks are next.
 */
export async function runPostCrawlStep(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  state: CrawlState,
  batch: WriteBatch,
  plan: RenderPlan | undefined,
  budget: ByteBudget,
  step: { limits: StepLimits; now: () => number },
): Promise<boolean> {
  if (!state.startChecked || state.ownBotBlocked) return false; // nothing was crawled
  state.post ??= { agent: false, render: null };
  const post = state.post;
  if (!post.agent) {
    await agentReadiness(kv, auditId, input, state, batch, budget);
    post.agent = true;
    return true;
  }
  if (state.resources && state.resources.checked < state.resources.tail) {
    const caps = capsOf(input);
    const politeness = new Politeness(state.crawlDelayMs, state.nextSlotAt);
    await checkResourceBatch(state.resources, batch, {
      kv,
      auditId,
      settings: settingsOf(input, budget),
      robots: new RobotsSource(
        kv,
        auditId,
        settingsOf(input, budget),
        state.robots,
        batch,
        caps.robots,
        (r) => noteRobotsCaps(state.capsHit ??= {}, r, caps.robots),
      ),
      politeness,
      concurrency: input.concurrency,
      stopAt: performance.now() + step.limits.ms,
      pastDeadline: () => input.deadlineAt !== undefined && step.now() > input.deadlineAt,
      hits: state.capsHit ??= {},
      byteLimit: budget.limit,
    });
    state.nextSlotAt = politeness.next;
    return true;
  }
  if (!input.render) return false;
  if (!plan?.renderer) throw new RenderingUnavailableError("This server does not render pages");
  if (post.render === null) {
    const sample = await selectSample(kv, auditId, state, plan);
    writeBlob(batch, auditId, SAMPLE_BLOB, JSON.stringify(sample.all));
    post.render = {
      lab: sample.lab.length,
      total: sample.all.length,
      next: 0,
      rendered: 0,
      failed: 0,
    };
    return true;
  }
  const r = post.render;
  if (r.next >= r.total) return false;
  const all = JSON.parse(await readBlob(kv, auditId, SAMPLE_BLOB)) as string[];
  const from = r.next;
  const to = Math.min(r.total, from + Math.max(1, plan.pagesPerStep));
  const results = await Promise.all(
    all.slice(from, to).map(async (url, k) => {
      try {
        return await plan.renderer!.render(url, from + k < r.lab);
      } catch (e) {
        if ((e as RenderFailedError)?.name === "RenderFailedError") {
          const kind = (e as RenderFailedError).kind;
          if (kind === "unavailable" || kind === "closed") {
            throw new RenderingUnavailableError((e as Error).message);
          }
        }
        return null; // timeout, crash, navigation error: counted, not fatal
      }
    }),
  );
  const findings = new FindingsWriter(batch, auditId, state.stored);
  const urls = all.slice(from, to);
  const records = await getMany(kv, urls.map((u) => keys.auditPage(auditId, u)));
  results.forEach((res, k) => {
    if (res === null) {
      r.failed++;
      return;
    }
    r.rendered++;
    if (res.lab) batch.set(keys.auditLab(auditId, urls[k]), labRecord(urls[k], res.lab));
    const fired = recordRender(res, state, findings, input.now);
    const rec = records[k];
    if (rec && fired.length > 0) {
      const checks = new Set([...rec.checks, ...fired]);
      batch.set(keys.auditPage(auditId, rec.url), { ...rec, checks: [...checks] });
    }
  });
  r.next = to;
  return true;
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

/** Home page plus the most linked fetched HTML 2xx pages, from the stored records and links. */
async function selectSample(
  kv: Deno.Kv,
  auditId: string,
  state: CrawlState,
  plan: RenderPlan,
) {
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
      if (r.url.length > MAX_SAMPLE_URL) continue;
      if (r.url === state.startUrl) home = r.url;
      candidates.push({ url: r.url, inlinks: inlinks.get(r.hash) ?? 0 });
      if (candidates.length > 2 * MAX_CANDIDATES) candidates = top(candidates);
    }
  }
  if (home === null && startTarget !== null && candidates.some((c) => c.url === startTarget)) {
    home = startTarget;
  }
  return pickRenderSample(home, top(candidates), {
    labCap: Math.min(plan.labPages, plan.maxPages),
    renderCap: plan.maxPages,
  });
}

function top(c: SampleCandidate[]): SampleCandidate[] {
  return c.sort((a, b) => b.inlinks - a.inlinks || (a.url < b.url ? -1 : 1))
    .slice(0, MAX_CANDIDATES);
}

/** `/llms.txt`, the AI crawlers' robots.txt rules, structured-data coverage. */
async function agentReadiness(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  state: CrawlState,
  batch: WriteBatch,
  budget: ByteBudget,
): Promise<void> {
  const findings = new FindingsWriter(batch, auditId, state.stored);
  const s = settingsOf(input, budget);

  // /llms.txt, through the address guard.
  const llmsUrl = `${state.origin}/llms.txt`;
  let ev: Evidence | null = null;
  let problems: string[] = [];
  let unread = false;
  try {
    const res = await fetchText(s, llmsUrl);
    const ct = res.headers.get("content-type");
    const text = new TextDecoder().decode(res.body);
    if (res.status !== 200) ev = { url: llmsUrl, status: res.status, reason: "not_found" };
    else if (isHtmlType(ct) || /^\s*<(!doctype|html)/i.test(text)) {
      ev = { url: llmsUrl, status: 200, reason: "html_page", content_type: ct };
    } else problems = llmsTxtProblems(text);
  } catch (e) {
    // A spent byte budget says nothing about the site: the file is not judged.
    if (e instanceof BudgetSpentError) unread = true;
    else ev = { url: llmsUrl, status: null, reason: `fetch_failed: ${failureKind(e)}` };
  }
  if (!unread) tally(state, "llms_txt_missing", 1, ev ? 1 : 0);
  if (ev) findings.add("llms_txt_missing", llmsUrl, [ev]);
  if (!ev && !unread) {
    tally(state, "llms_txt_malformed", 1, problems.length > 0 ? 1 : 0);
    if (problems.length > 0) {
      findings.add("llms_txt_malformed", llmsUrl, [{ url: llmsUrl, problems }]);
    }
  }

  // AI crawlers in the start origin's robots.txt (the copy the crawl stored).
  const robotsMeta = state.robots[state.origin];
  if (robotsMeta) {
    const robots = await new RobotsSource(
      kv,
      auditId,
      s,
      state.robots,
      batch,
      input.caps?.robots,
    ).for(state.origin);
    const body = robotsMeta.state === "ok"
      ? await readBlob(kv, auditId, `robots ${state.origin}`) // RobotsSource's blob name
      : "";
    const named = new Set(
      [...body.matchAll(/^\s*user-agent\s*:\s*([^\s#]+)/gim)].map((m) => m[1].toLowerCase()),
    );
    const allowed: string[] = [];
    const blocked: string[] = [];
    for (const bot of AI_CRAWLERS) {
      (robots.isAllowed(state.startUrl, bot) ? allowed : blocked).push(bot);
    }
    // Reported, not judged: a robots.txt that names an AI crawler or keeps one out has said
    // something about AI crawlers, and the finding shows what; one that says nothing about them
    // (they all follow `*` and may crawl) has nothing to report.
    const namedBots = AI_CRAWLERS.filter((b) => named.has(b.toLowerCase()));
    const says = namedBots.length > 0 || blocked.length > 0;
    tally(state, "ai_crawler_rules", 1, says ? 1 : 0);
    if (says) {
      findings.add("ai_crawler_rules", robotsMeta.url, [{
        url: robotsMeta.url,
        robots_txt: robotsMeta.state,
        allowed,
        blocked,
        named: namedBots,
      }]);
    }
  }

  // Structured-data coverage, from the page check's tally.
  const sd = state.tallies["structured_data_missing"];
  if (sd && sd[0] > 0) {
    const withJsonLd = sd[0] - sd[1];
    tally(state, "structured_data_coverage", 1, sd[1] > 0 ? 1 : 0);
    if (sd[1] > 0) {
      findings.add("structured_data_coverage", state.startUrl, [{
        url: state.startUrl,
        coverage: Math.round((withJsonLd / sd[0]) * 1000) / 1000,
        pages_with_json_ld: withJsonLd,
        indexable_pages: sd[0],
      }]);
    }
  }
}
