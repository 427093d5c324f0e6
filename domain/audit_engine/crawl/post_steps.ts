/**
 * The steps after the crawl and before the site-wide checks (`finalize.ts`), in this order: the
 * resource checks of broken_resources (resource_checks.ts, a batch per step until the queue is
 * checked); for a rendered audit, the render steps (render_steps.ts: a sample rendered a few
 * pages per step, in rounds: the URLs rendered DOMs link to are crawled, then rendered, in the
 * next round, whose crawl queues more resources); last, agent-readiness (`/llms.txt` through
 * the address guard, the AI crawlers' robots.txt rules, structured-data coverage of every page
 * crawled), in the step of the site-wide checks, before them. Each step's tallies and evidence
 * join the crawl's (same stored findings, same scoring), and its progress is in
 * `CrawlState.post`, committed with the step like any other: a step that dies is repeated.
 *
 * @module
 */
import type { Evidence, PostCrawlState } from "../types.ts";
import { AI_CRAWLERS, llmsTxtProblems } from "../checks/agent.ts";
import { probeSample, runAgentProbes } from "./agent_probes.ts";
import { failureKind, fetchText, isHtmlType, settingsOf } from "./fetcher.ts";
import { newPace, Politeness } from "./politeness.ts";
import { capsOf, noteRobotsCaps } from "./caps.ts";
import { checkResourceBatch } from "./resource_checks.ts";
import { BudgetSpentError, type ByteBudget } from "./byte_budget.ts";
import { RobotsSource, storedRobots } from "./robots_source.ts";
import { DEFAULT_ROBOTS_CAPS } from "../robots.ts";
import type { CrawlInput, CrawlState, StepLimits } from "./state.ts";
import { renderingUnavailable, type RenderPlan, runRenderStep } from "./render_steps.ts";
import { FindingsWriter, WriteBatch } from "./store.ts";

export type { RenderPlan } from "./render_steps.ts";

export type { PostCrawlState };

function tally(state: CrawlState, id: string, eligible: number, affected: number): void {
  const t = state.tallies[id] ?? [0, 0];
  state.tallies[id] = [t[0] + eligible, t[1] + affected];
}

/**
 * Whether a step of the crawl's finalize phase checks resources (a step of its own, batch after
 * batch) rather than go on to the site-wide checks; a rendered audit has render steps as well.
 */
export function resourcesPending(state: CrawlState): boolean {
  return state.resources !== undefined && state.resources.checked < state.resources.tail;
}

/**
 * Takes one post-crawl step if one is due: true when it did (the caller commits the state and
 * comes back), false when the site-wide checks are next (after agent-readiness, which this
 * call then ran, its writes in `batch`).
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
  if (state.resources && resourcesPending(state)) {
    const caps = capsOf(input);
    const politeness = new Politeness(state.pace ??= newPace(), input.maxRps ?? null);
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
    return true;
  }
  if (input.render) {
    if (!plan?.renderer) throw renderingUnavailable("This server does not render pages");
    const rendered = await runRenderStep({
      kv,
      auditId,
      input,
      state,
      batch,
      plan,
      budget,
      now: step.now,
    });
    if (rendered) return true;
  }
  // Last: structured-data coverage reads the tallies of every page crawled, and a rendered
  // audit's later rounds crawl more pages. It shares its step with the site-wide checks, which
  // come next anyway: a step fewer (its commit and the next claim, round trips on a remote KV).
  if (!post.agent) {
    // The audit's deadline is on the job's clock (`step.now`); politeness waits on Date.now.
    const left = input.deadlineAt === undefined ? Infinity : input.deadlineAt - step.now();
    const deadline = Date.now() + Math.max(0, Math.min(step.limits.ms, left));
    await agentReadiness(kv, auditId, input, state, batch, budget, deadline);
    post.agent = true;
  }
  return false;
}

/**
 * `/llms.txt`, the AI crawlers' robots.txt rules, structured-data coverage, and the `agents`
 * probes (agent_probes.ts), which start no request after `deadline` (epoch ms).
 */
async function agentReadiness(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  state: CrawlState,
  batch: WriteBatch,
  budget: ByteBudget,
  deadline: number,
): Promise<void> {
  const findings = new FindingsWriter(batch, auditId, state.stored);
  const s = settingsOf(input, budget);
  // The start origin's stored robots.txt, parsed and as text, read while /llms.txt is fetched
  // (a round trip on a remote KV, which the fetch would otherwise wait for in turn).
  const robotsMeta = state.robots[state.origin];
  const caps = input.caps?.robots ?? DEFAULT_ROBOTS_CAPS;
  const stored = robotsMeta
    ? storedRobots(kv, auditId, state.origin, robotsMeta, caps, s.robotsToken)
    : null;
  stored?.catch(() => {}); // awaited below; a failure there is the one reported
  // The pages the agent probes ask for, read meanwhile too.
  const sample = stored
    ? probeSample({ kv, auditId, origin: state.origin, startUrl: state.startUrl })
    : null;
  sample?.catch(() => {});

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
  if (stored) {
    const { robots, text: body } = await stored;
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
    await runAgentProbes({
      kv,
      auditId,
      origin: state.origin,
      startUrl: state.startUrl,
      settings: s,
      budget,
      politeness: new Politeness(state.pace ??= newPace(), input.maxRps ?? null),
      deadline,
      maxRps: input.maxRps ?? null,
      robots,
      robotsBody: body,
      tally: (id, e, a) => tally(state, id, e, a),
      add: (id, url, items) => findings.add(id, url, items),
      sample: sample!,
    });
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
