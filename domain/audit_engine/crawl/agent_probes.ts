/**
 * The network side of the `agents` category (checks/agents.ts), run in the agent-readiness
 * step after the crawl: real requests with each bot class's user-agent token on a small
 * sample of crawled pages (the home page as every token, one more page as each class's first
 * token, each beside a browser request), Markdown on request, the home page's `Link` header and
 * the discovery documents; and the Content Signals of the robots.txt the crawl stored.
 *
 * Every request goes through the address guard (`safeFetch`), is charged to the audit's byte
 * budget and waits for its slot like the crawl's (politeness.ts: the rate, robots.txt's
 * Crawl-delay, a 429's Retry-After). A request that no longer fits the step's time or the byte
 * budget is not made, and the checks it would have fed are left unjudged (no tally), never
 * judged on half the answers.
 *
 * @module
 */
import { safeFetch, type SafeResponse } from "../../net/mod.ts";
import { keys, list } from "../../platform/mod.ts";
import type { Evidence } from "../types.ts";
import type { Robots } from "../robots.ts";
import { BOT_TOKEN } from "../robots.ts";
import { sameOrigin } from "../site_auth.ts";
import {
  accessVerdict,
  agentLinkRels,
  BOT_CLASS_ORDER,
  BOT_CLASSES,
  type BotClass,
  DISCOVERY_CHECK,
  DISCOVERY_DOCUMENTS,
  type DiscoveryDocument,
  discoveryProblems,
  isMarkdownAnswer,
  parseContentSignals,
  paymentScheme,
  ROBOTS_ONLY_TOKENS,
  signalConflicts,
} from "../checks/agents.ts";
import { BudgetSpentError, type ByteBudget } from "./byte_budget.ts";
import type { FetchSettings } from "./fetcher.ts";
import { isHtmlType } from "./fetcher.ts";
import type { Politeness } from "./politeness.ts";
import { getPages } from "./store.ts";

/** Crawled pages the bots' requests are tried on (the home page and this many more). */
export const PROBE_PAGES = 2;
/** Body bytes read of a probed page: enough to tell a challenge page, little to pay for. */
const PROBE_BYTES = 16 * 1024;
/** Body bytes of a discovery document or a Markdown answer. */
const DOC_BYTES = 256 * 1024;
/** Frontier positions looked at for the sample (the first pages the crawl fetched). */
const SAMPLE_SCAN = 20;

/** Our own name, as every probe's User-Agent carries it (as the crawl presets do). */
const SELF = `${BOT_TOKEN}/1.0; +https://serpwright.com/bot`;
const CHROME = "Chrome/140.0.0.0";

/**
 * The User-Agent a probe sends as `token`: the bot's token, as a firewall rule matches it, and
 * our own name beside it, so the site's logs show who asked (we never pose as the bot itself).
 */
export function probeUserAgent(token: string | null): string {
  return token === null
    ? `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) ${CHROME} ` +
      `Safari/537.36 (${SELF})`
    : `Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ${token}/1.0; ${SELF}) ` +
      `${CHROME} Safari/537.36`;
}

/** What the probes need from the step. */
export interface ProbeContext {
  kv: Deno.Kv;
  auditId: string;
  origin: string;
  startUrl: string;
  settings: FetchSettings;
  budget: ByteBudget;
  politeness: Politeness;
  /** Epoch ms after which no request starts. */
  deadline: number;
  /** The audit's request rate cap (requests per second), if any: with Crawl-delay, the pace. */
  maxRps: number | null;
  robots: Robots;
  /** The stored robots.txt body ("" when none). */
  robotsBody: string;
  /** Records a check's tally (eligible, affected). */
  tally: (id: string, eligible: number, affected: number) => void;
  /** Stores a check's evidence. */
  add: (id: string, url: string, items: Evidence[]) => void;
  /** The sampled pages, read already (`probeSample`, beside the caller's own reads). */
  sample?: Promise<string[]>;
}

/** Why a probe was not made: the step's time or the byte budget ran out. */
class ProbeStopped extends Error {}

/** One request, paced and charged; null body unless 2xx. */
async function probe(
  c: ProbeContext,
  url: string,
  ua: string,
  accept: string,
  maxBytes: number,
): Promise<SafeResponse | null> {
  const host = new URL(url).host;
  if (!(await c.politeness.wait(host, c.robots.crawlDelay, c.deadline))) throw new ProbeStopped();
  const cap = await c.budget.reserve(Math.min(maxBytes, c.settings.maxBytes));
  if (cap === null) throw new BudgetSpentError();
  const headers: Record<string, string> = { "user-agent": ua, accept };
  const s = c.settings;
  if (s.auth && sameOrigin(url, s.auth.origin)) Object.assign(headers, s.auth.headers);
  let read = 0;
  try {
    const res = await safeFetch(url, {
      allowPrivate: s.allowPrivate,
      timeoutMs: s.timeoutMs,
      maxBytes: cap,
      resolver: s.resolver,
      ca: s.ca,
      headers,
      shouldReadBody: (st) => st >= 200 && st < 300,
    });
    read = res.body.byteLength;
    return res;
  } catch (e) {
    if (e instanceof BudgetSpentError) throw e;
    return null; // no answer: an "error" verdict, like a network failure
  } finally {
    c.budget.settle(cap, read);
  }
}

const ACCEPT_HTML = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5";

/** Probes in flight at once (each still takes its slot from the host's pace, so a paced host
 * is asked one at a time as before; an unpaced one no longer waits out 16 round trips). */
const PROBES_IN_FLIGHT = 4;

/**
 * `tasks` run at most PROBES_IN_FLIGHT at a time; the results in the tasks' order. Every task
 * settles before a failure (a spent budget, the step's time) is passed on, so none is left
 * running past the step.
 */
async function inFlight<T>(tasks: (() => Promise<T>)[]): Promise<T[]> {
  const out = new Array<PromiseSettledResult<T>>(tasks.length);
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) {
      const i = next++;
      try {
        out[i] = { status: "fulfilled", value: await tasks[i]() };
      } catch (reason) {
        out[i] = { status: "rejected", reason };
        next = tasks.length; // start nothing more once one failed
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PROBES_IN_FLIGHT, tasks.length) }, lane));
  const failed = out.find((r): r is PromiseRejectedResult => r?.status === "rejected");
  if (failed) throw failed.reason;
  return out.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/**
 * The sampled pages: the start URL and the first crawled HTML 2xx pages after it (two round trips
 * on a remote KV: a caller starts it beside its own reads and hands it over as `sample`).
 */
export async function probeSample(
  c: Pick<ProbeContext, "kv" | "auditId" | "origin" | "startUrl">,
): Promise<string[]> {
  const urls: string[] = [];
  for await (
    const e of list(c.kv, {
      start: keys.auditFrontier(c.auditId, 0),
      end: keys.auditFrontier(c.auditId, SAMPLE_SCAN),
    }, { limit: SAMPLE_SCAN })
  ) urls.push(e.value.url);
  const records = await getPages(c.kv, c.auditId, urls);
  const pages = records
    .filter((r) => r && r.html && r.status >= 200 && r.status < 300 && sameOrigin(r.url, c.origin))
    .map((r) => r!.url);
  const home = pages[0] ?? c.startUrl;
  return [home, ...pages.filter((u) => u !== home).slice(0, PROBE_PAGES - 1)];
}

/** Requests of the full probe set: 17 bot and browser probes, Markdown, 5 documents. */
const FULL_REQUESTS = 23;

/**
 * Whether the full set cannot be paced into the step's time (a Crawl-delay or a low rate cap):
 * then the matrix asks the home page once per class (its first token) and once as a browser,
 * so every class is still answered for and the documents still fit.
 */
function mustBeLean(c: ProbeContext): boolean {
  const intervalMs = Math.max(
    Math.min(c.robots.crawlDelay, 10) * 1000,
    c.maxRps && c.maxRps > 0 ? 1000 / c.maxRps : 0,
  );
  return intervalMs * FULL_REQUESTS > c.deadline - Date.now();
}

/**
 * Whether the start URL answered the crawl with 2xx or a redirect: else the sample's first
 * page is not the home page, and what the home page offers agents is not judged.
 */
async function startAnswered(c: ProbeContext): Promise<boolean> {
  const [rec] = await getPages(c.kv, c.auditId, [c.startUrl]);
  return rec !== null && rec.state === "fetched" && rec.status >= 200 && rec.status < 400;
}

/** One class's row of the access matrix. */
interface ClassRow {
  robotsAllowed: string[];
  robotsBlocked: string[];
  /** token → verdicts on the pages it was sent to. */
  server: Map<string, string[]>;
}

/** Runs every probe and records the `agents` checks' tallies and evidence. */
export async function runAgentProbes(c: ProbeContext): Promise<void> {
  try {
    contentSignals(c);
    // Read while the matrix's probes run (a round trip on a remote KV).
    const answered = startAnswered(c);
    answered.catch(() => {}); // awaited below; a failure of the matrix is the one reported
    const home = await accessMatrix(c);
    if (await answered) await homeOffers(c, home);
    await discovery(c);
  } catch (e) {
    // Out of time or bytes: what was judged stays, the rest is not judged (see module doc).
    if (!(e instanceof ProbeStopped) && !(e instanceof BudgetSpentError)) throw e;
  }
}

/** Which classes robots.txt keeps out of the start URL entirely (every token disallowed). */
function robotsBlockedClasses(c: ProbeContext): Set<BotClass> {
  const out = new Set<BotClass>();
  for (const cls of BOT_CLASS_ORDER) {
    if (BOT_CLASSES[cls].every((t) => !c.robots.isAllowed(c.startUrl, t))) out.add(cls);
  }
  return out;
}

function contentSignals(c: ProbeContext): void {
  if (c.robots.state !== "ok") return;
  const signals = parseContentSignals(c.robotsBody);
  const url = `${c.origin}/robots.txt`;
  const declared = signals.entries.length > 0 || signals.problems.length > 0;
  c.tally("content_signals", 1, declared ? 1 : 0);
  if (declared) {
    c.add("content_signals", url, [{
      url,
      signals: signals.entries.slice(0, 20).map((e) =>
        `${e.directive} ${e.path ? e.path + " " : ""}${e.use}=${e.allowed ? "yes" : "no"}` +
        ` (User-agent: ${e.group})`
      ),
    }]);
  }
  if (!declared) return;
  const conflicts = signalConflicts(signals, robotsBlockedClasses(c));
  c.tally("content_signal_conflict", 1, conflicts.length > 0 ? 1 : 0);
  if (conflicts.length > 0) c.add("content_signal_conflict", url, [{ url, conflicts }]);
}

/** The access matrix; answers the home page and a browser's answer to it (null: none). */
async function accessMatrix(
  c: ProbeContext,
): Promise<{ url: string; browser: SafeResponse | null }> {
  const lean = mustBeLean(c);
  const sample = await (c.sample ?? probeSample(c));
  const pages = lean ? sample.slice(0, 1) : sample;
  const rows = new Map<BotClass, ClassRow>();
  const blockedItems: Evidence[] = [];
  let homeBrowser: SafeResponse | null = null;
  for (const cls of BOT_CLASS_ORDER) {
    const row: ClassRow = { robotsAllowed: [], robotsBlocked: [], server: new Map() };
    for (const t of BOT_CLASSES[cls]) {
      (c.robots.isAllowed(pages[0], t) ? row.robotsAllowed : row.robotsBlocked).push(t);
    }
    rows.set(cls, row);
  }
  for (const [i, page] of pages.entries()) {
    const browser = await probe(c, page, probeUserAgent(null), ACCEPT_HTML, PROBE_BYTES);
    if (i === 0) homeBrowser = browser;
    const browserOk = browser !== null && accessVerdict(browser.status, browser.headers) === "ok";
    const asked: { cls: BotClass; token: string }[] = [];
    for (const cls of BOT_CLASS_ORDER) {
      const sendable = BOT_CLASSES[cls].filter((t) => !ROBOTS_ONLY_TOKENS.has(t));
      for (const token of i === 0 && !lean ? sendable : sendable.slice(0, 1)) {
        asked.push({ cls, token });
      }
    }
    const answers = await inFlight(
      asked.map(({ token }) => () =>
        probe(c, page, probeUserAgent(token), ACCEPT_HTML, PROBE_BYTES)
      ),
    );
    for (const [k, { cls, token }] of asked.entries()) {
      const row = rows.get(cls)!;
      const res = answers[k];
      const verdict = res ? accessVerdict(res.status, res.headers) : "error";
      // A 402 names its scheme (pay per crawl, x402): a price, shown in the matrix.
      const shown = res && verdict === "payment" ? `402 ${paymentScheme(res.headers)}` : verdict;
      row.server.set(token, [...(row.server.get(token) ?? []), shown]);
      // A block robots.txt does not announce, on a page a browser gets (a 402 is a price,
      // not a block).
      if (
        verdict === "blocked" && browserOk &&
        c.robots.isAllowed(page, token)
      ) {
        blockedItems.push({
          url: page,
          bot_class: cls,
          bot: token,
          status: res?.status ?? 0,
          browser_status: browser!.status,
        });
      }
    }
  }
  c.tally("ai_bot_blocked_by_server", pages.length, new Set(blockedItems.map((b) => b.url)).size);
  if (blockedItems.length > 0) c.add("ai_bot_blocked_by_server", pages[0], blockedItems);

  const matrix: Evidence[] = [];
  for (const cls of BOT_CLASS_ORDER) {
    const row = rows.get(cls)!;
    const serverBlocked = [...row.server].filter(([, v]) => v.some((x) => x !== "ok"))
      .map(([t, v]) => `${t}: ${v.join("/")}`);
    const serverOk = [...row.server].filter(([, v]) => v.every((x) => x === "ok")).map(([t]) => t);
    // No answer or a 5xx is listed with the row but keeps no class out: the browser would
    // likely have failed too.
    const keptOut = [...row.server.values()].some((v) =>
      v.some((x) => x !== "ok" && x !== "error")
    );
    if (row.robotsBlocked.length > 0 || keptOut) {
      matrix.push({
        url: pages[0],
        bot_class: cls,
        robots_allowed: row.robotsAllowed,
        robots_blocked: row.robotsBlocked,
        server_ok: serverOk,
        server_refused: serverBlocked,
        pages_sampled: pages.length,
      });
    }
  }
  c.tally("ai_bot_access", 1, matrix.length > 0 ? 1 : 0);
  if (matrix.length > 0) c.add("ai_bot_access", pages[0], matrix);
  return { url: pages[0], browser: homeBrowser };
}

/**
 * Markdown on request and the Link header, both of the home page (the header as a browser
 * gets it); not judged when the home page does not answer a browser with 2xx (that is
 * home_page_error's, and says nothing about what the site offers).
 */
async function homeOffers(
  c: ProbeContext,
  { url: home, browser }: { url: string; browser: SafeResponse | null },
): Promise<void> {
  if (browser === null || browser.status < 200 || browser.status >= 300) return;
  const md = await probe(
    c,
    home,
    probeUserAgent(null),
    "text/markdown, text/plain;q=0.5, text/html;q=0.1",
    DOC_BYTES,
  );
  if (md === null) return; // no answer: nothing to say about what it offers
  const ct = md.headers.get("content-type");
  const offered = md.status >= 200 && md.status < 300 &&
    isMarkdownAnswer(ct, new TextDecoder().decode(md.body.subarray(0, 4096)));
  c.tally("markdown_on_request_missing", 1, offered ? 0 : 1);
  if (!offered) {
    c.add("markdown_on_request_missing", home, [{
      url: home,
      status: md.status,
      content_type: ct,
    }]);
  }
  const link = browser.headers.get("link");
  const rels = agentLinkRels(link);
  c.tally("agent_link_headers_missing", 1, rels.length > 0 ? 0 : 1);
  if (rels.length === 0) c.add("agent_link_headers_missing", home, [{ url: home, link }]);
}

async function discovery(c: ProbeContext): Promise<void> {
  const present: string[] = [];
  let answered = 0;
  const invalid = new Map<string, Evidence[]>();
  const eligible = new Map<string, number>();
  // Our own token's robots.txt rules hold here too: a disallowed document is not asked for.
  const documents = (Object.entries(DISCOVERY_DOCUMENTS) as [DiscoveryDocument, string][])
    .map(([kind, path]) => ({ kind, url: c.origin + path }))
    .filter((d) => c.robots.isAllowed(d.url));
  const answers = await inFlight(
    documents.map((d) => () =>
      probe(c, d.url, probeUserAgent(null), "application/json, */*;q=0.5", DOC_BYTES)
    ),
  );
  for (const [k, { kind, url }] of documents.entries()) {
    const res = answers[k];
    if (!res) continue;
    answered++;
    if (res.status !== 200) continue;
    const body = new TextDecoder().decode(res.body);
    // A catch-all route's HTML page is no document.
    if (isHtmlType(res.headers.get("content-type")) || /^\s*<(!doctype|html)/i.test(body)) continue;
    present.push(kind);
    const check = DISCOVERY_CHECK[kind];
    eligible.set(check, (eligible.get(check) ?? 0) + 1);
    const problems = res.truncated
      ? ["larger than 256 KiB"]
      : discoveryProblems(kind, body, c.origin);
    if (problems.length > 0) {
      invalid.set(check, [...(invalid.get(check) ?? []), { url, document: kind, problems }]);
    }
  }
  for (const check of new Set(Object.values(DISCOVERY_CHECK))) {
    const n = eligible.get(check) ?? 0;
    if (n === 0) continue;
    const items = invalid.get(check) ?? [];
    c.tally(check, n, items.length);
    if (items.length > 0) c.add(check, items[0].url as string, items);
  }
  // A site that answered none of them (TLS, network) has not said it publishes none.
  if (answered === 0) return;
  c.tally("agent_discovery_missing", 1, present.length === 0 ? 1 : 0);
  if (present.length === 0) {
    c.add("agent_discovery_missing", c.origin + "/", [{
      url: c.origin + "/",
      looked_for: Object.values(DISCOVERY_DOCUMENTS),
    }]);
  }
}
