/**
 * robots.txt reading: parsing (RFC 9309 groups, Google's precedence) and matching, with caps
 * that bound the cost of a hostile file, plus a small linter for the lines Lighthouse's
 * robots-txt audit rejects.
 *
 * Written here rather than taken from npm `robots-parser`: that library's matcher costs
 * pattern × path steps per rule, with no limit on rules or URL length, so a 500 KiB file of
 * `Disallow: /*a*a*…*b` lines held the event loop 2–5 s per 1,500-character URL, and the crawl
 * asks once per frontier URL. The grammar is a few lines; the matcher, about one pass over the
 * path per rule, is in `robots_pattern.ts`. So one call costs at most about maxRules ×
 * maxPathLength steps, and what the caps drop is reported in `capped`.
 *
 * @module
 */
import type { RobotsCaps, RobotsState } from "./types.ts";
import {
  collapseWildcards,
  compilePattern,
  countWildcards,
  matchesPattern,
  OctetPath,
  type RobotsPattern,
  toOctets,
} from "./robots_pattern.ts";

/** Our product token; rules are matched on it, never on the full User-Agent string. */
export const BOT_TOKEN = "SerpwrightBot";
export const USER_AGENT = `Mozilla/5.0 (compatible; ${BOT_TOKEN}/1.0; +https://serpwright.com/bot)`;

export type { RobotsCaps };

export const DEFAULT_ROBOTS_CAPS: Readonly<RobotsCaps> = Object.freeze({
  maxBytes: 500 * 1024,
  maxRules: 5_000,
  maxPatternLength: 1_000,
  maxWildcards: 20,
  maxWildcardRules: 500,
  maxPathLength: 2_048,
});

/** Google's robots.txt size cap (the default `maxBytes`). */
export const ROBOTS_MAX_BYTES = DEFAULT_ROBOTS_CAPS.maxBytes;

/**
 * What the caps cut from one file: all zero / false when none was hit. A dropped rule is counted
 * once, under the first cap it met (pattern length, then wildcards, then the rule count).
 */
export interface RobotsCapReport {
  /** The file was over `maxBytes`: only its first whole lines within the limit were read. */
  bytesTruncated: boolean;
  /** Rules past `maxRules`, dropped. */
  rulesDropped: number;
  /** Rules whose pattern was over `maxPatternLength`, dropped. */
  longPatternsDropped: number;
  /** Rules whose pattern had more than `maxWildcards` wildcards, dropped. */
  wildcardPatternsDropped: number;
  /** Wildcard rules past `maxWildcardRules`, dropped. */
  wildcardRulesDropped: number;
}

export type { RobotsState };

export interface Robots {
  state: RobotsState;
  /** HTTP status of the final response; 0 when unreachable. */
  status: number;
  /**
   * Whether `agent` (a product token; default the crawl's own, `makeRobots`' `agent`) may fetch
   * `url`; other origins: true.
   */
  isAllowed(url: string, agent?: string): boolean;
  /** Crawl-delay for the crawl's own token (or `*`), seconds; 0 when none. */
  crawlDelay: number;
  sitemaps: string[];
  /** Lines a strict reader rejects (empty when valid). */
  problems: string[];
  /** Rules and bytes the caps left out. */
  capped: RobotsCapReport;
}

interface Rule {
  pattern: RobotsPattern;
  allow: boolean;
}

/** One group: its rules and Crawl-delay, shared by every User-agent line that opened it. */
interface Group {
  rules: Rule[];
  crawlDelay?: number;
}

interface Parsed {
  groups: Group[];
  /** Product token → indexes of the groups naming it (RFC 9309: matching groups are merged). */
  byAgent: Map<string, number[]>;
  sitemaps: string[];
  capped: RobotsCapReport;
}

/** isAllowed answers remembered per (agent, path): the crawl asks again for repeated URLs. */
const MEMO_ENTRIES = 10_000;
/** …and at most this many key characters in all, so long URLs cannot make the memo large. */
const MEMO_KEY_CHARS = 4_000_000;
/** Distinct agents whose merged, sorted rule list is kept (callers use a couple of dozen). */
const AGENT_LISTS = 64;

const KNOWN = new Set([
  "user-agent",
  "allow",
  "disallow",
  "sitemap",
  "crawl-delay",
  "clean-param",
  "host",
  "request-rate",
  "visit-time",
  "noindex",
  "content-signal",
  "content-usage",
]);

/**
 * The product token a User-agent line or an `agent` argument names: lower case, up to the first
 * `/` or space (`Googlebot/2.1` and `googlebot` are the same crawler, RFC 9309 §2.2.1).
 */
export function productToken(value: string): string {
  const v = value.trim().toLowerCase();
  const end = v.search(/[\s/]/);
  return end < 0 ? v : v.slice(0, end);
}

/**
 * Builds a Robots from the fetched file (state "ok") or an allow-all stand-in. `caps` bounds the
 * work any file can cause; omitted fields take `DEFAULT_ROBOTS_CAPS`. `agent` is the product
 * token the crawl obeys (ours, or the token of the audit's `user_agent` preset): the default of
 * `isAllowed` and the group `crawlDelay` is read from.
 */
export function makeRobots(
  robotsUrl: string,
  state: RobotsState,
  status: number,
  body: string,
  caps: Partial<RobotsCaps> = {},
  agent: string = BOT_TOKEN,
): Robots {
  const c = resolveCaps(caps);
  // A missing or unreachable file means "allow all" for crawling (seonaut, Google after 4xx);
  // the unreachable case is still reported as a critical issue.
  const parsed = parseRobots(state === "ok" ? body : "", c);
  let base: URL | null = null;
  try {
    base = new URL(robotsUrl);
  } catch {
    base = null; // no file applies to any URL: all allowed
  }

  const lists = new Map<string, Rule[]>();
  /** The agent's rules (its groups merged, else `*`'s), most specific first, Allow first on ties. */
  const rulesFor = (token: string): Rule[] => {
    let rules = lists.get(token);
    if (rules) return rules;
    const groups = parsed.byAgent.get(token) ?? parsed.byAgent.get("*") ?? [];
    rules = groups.flatMap((g) => parsed.groups[g].rules);
    rules.sort((a, b) => b.pattern.octets - a.pattern.octets || Number(b.allow) - Number(a.allow));
    if (lists.size >= AGENT_LISTS) lists.clear();
    lists.set(token, rules);
    return rules;
  };
  const memo = new Memo(MEMO_ENTRIES, MEMO_KEY_CHARS);

  const isAllowed = (url: string, asked: string = agent): boolean => {
    if (base === null) return true;
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return true;
    }
    // The file speaks for its own scheme, host and port only.
    if (u.protocol !== base.protocol || u.host !== base.host) return true;
    const raw = u.pathname + u.search;
    // An escape is 3 characters for 1 octet: cut before decoding so the work is bounded too.
    const path = toOctets(raw.slice(0, 3 * c.maxPathLength)).slice(0, c.maxPathLength);
    const token = productToken(asked) || "*";
    const key = `${token}\n${path}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let allowed = true;
    const subject = new OctetPath(path);
    for (const rule of rulesFor(token)) {
      if (matchesPattern(rule.pattern, subject)) {
        allowed = rule.allow;
        break;
      }
    }
    memo.set(key, allowed);
    return allowed;
  };

  const ours = parsed.byAgent.get(productToken(agent)) ?? parsed.byAgent.get("*") ?? [];
  let delay: number | undefined;
  for (const g of ours) delay = parsed.groups[g].crawlDelay ?? delay;
  return {
    state,
    status,
    isAllowed,
    crawlDelay: typeof delay === "number" && Number.isFinite(delay) && delay > 0 ? delay : 0,
    sitemaps: parsed.sitemaps,
    problems: state === "ok" ? lintRobots(body, c.maxBytes) : [],
    capped: parsed.capped,
  };
}

/** Caps with defaults filled in; a value that is not a number ≥ 0 takes its default. */
function resolveCaps(caps: Partial<RobotsCaps>): RobotsCaps {
  const out = { ...DEFAULT_ROBOTS_CAPS };
  for (const k of Object.keys(out) as (keyof RobotsCaps)[]) {
    const v = caps[k];
    if (typeof v === "number" && v >= 0) out[k] = Math.floor(v);
  }
  return out;
}

/**
 * The first `maxBytes` of the file, ending at a line break: a line cut in the middle could turn
 * `Disallow: /private` into `Disallow: /p`, so it is left out whole.
 */
function withinBytes(body: string, maxBytes: number): { text: string; truncated: boolean } {
  if (body.length * 3 <= maxBytes) return { text: body, truncated: false }; // ≤ 3 bytes a unit
  const bytes = new TextEncoder().encode(body);
  if (bytes.length <= maxBytes) return { text: body, truncated: false };
  const next = bytes[maxBytes];
  const text = new TextDecoder().decode(bytes.subarray(0, maxBytes));
  if (next === 0x0a || next === 0x0d) return { text, truncated: true };
  const lastBreak = Math.max(text.lastIndexOf("\n"), text.lastIndexOf("\r"));
  return { text: text.slice(0, lastBreak + 1), truncated: true };
}

/**
 * RFC 9309 §2.1–2.2: consecutive User-agent lines open a group, which takes the Allow, Disallow
 * and Crawl-delay lines after them until the next User-agent line. Sitemap and unknown lines sit
 * outside groups and neither open nor close one (as Google reads them). Rules before any
 * User-agent line belong to nobody (the linter reports them).
 */
function parseRobots(body: string, caps: RobotsCaps): Parsed {
  const capped: RobotsCapReport = {
    bytesTruncated: false,
    rulesDropped: 0,
    longPatternsDropped: 0,
    wildcardPatternsDropped: 0,
    wildcardRulesDropped: 0,
  };
  let wildcardRules = 0;
  const { text, truncated } = withinBytes(body.replace(/^\uFEFF/, ""), caps.maxBytes);
  capped.bytesTruncated = truncated;
  const groups: Group[] = [];
  const byAgent = new Map<string, number[]>();
  const sitemaps: string[] = [];
  let agents: string[] = [];
  let group: Group | null = null;
  let readingAgents = false;
  let kept = 0;
  for (const line of text.split(/\r\n|\r|\n/)) {
    const hash = line.indexOf("#");
    const content = hash < 0 ? line : line.slice(0, hash);
    const colon = content.indexOf(":");
    if (colon < 0) continue;
    const key = content.slice(0, colon).trim().toLowerCase();
    const value = content.slice(colon + 1).trim();
    if (key === "user-agent") {
      if (!readingAgents) {
        agents = [];
        group = null;
        readingAgents = true;
      }
      const token = productToken(value);
      if (token !== "") agents.push(token);
      continue;
    }
    if (key === "sitemap") {
      if (value !== "") sitemaps.push(value);
      continue;
    }
    if (key !== "allow" && key !== "disallow" && key !== "crawl-delay") continue;
    readingAgents = false;
    if (agents.length === 0) continue;
    if (group === null) {
      group = { rules: [] };
      groups.push(group);
      for (const a of agents) {
        const list = byAgent.get(a);
        if (list) list.push(groups.length - 1);
        else byAgent.set(a, [groups.length - 1]);
      }
    }
    if (key === "crawl-delay") {
      const delay = Number(value);
      if (!Number.isNaN(delay)) group.crawlDelay = delay;
    } else if (value === "") {
      continue; // an empty rule matches nothing; the group still exists (allow all)
    } else if (value.length > caps.maxPatternLength) {
      capped.longPatternsDropped++;
    } else if (countWildcards(collapseWildcards(value)) > caps.maxWildcards) {
      capped.wildcardPatternsDropped++;
    } else if (kept >= caps.maxRules) {
      capped.rulesDropped++;
    } else if (value.includes("*") && wildcardRules >= caps.maxWildcardRules) {
      capped.wildcardRulesDropped++;
    } else {
      if (value.includes("*")) wildcardRules++;
      kept++;
      group.rules.push({ pattern: compilePattern(value), allow: key === "allow" });
    }
  }
  return { groups, byAgent, sitemaps, capped };
}

/**
 * A bounded memo, emptied when full (by entries or key characters). Not LRU: evicting the oldest
 * key of a Map (`keys().next()` after deletes) walks V8's deleted-entry holes, which made a crawl of
 * distinct URLs spend most of its isAllowed time evicting.
 */
class Memo {
  private readonly map = new Map<string, boolean>();
  private chars = 0;

  constructor(private readonly maxEntries: number, private readonly maxChars: number) {}

  get(key: string): boolean | undefined {
    return this.map.get(key);
  }

  set(key: string, value: boolean): void {
    if (this.map.size >= this.maxEntries || this.chars + key.length > this.maxChars) {
      this.map.clear();
      this.chars = 0;
    }
    if (key.length > this.maxChars || this.maxEntries === 0) return;
    this.map.set(key, value);
    this.chars += key.length;
  }
}

/** Lighthouse-style validation of robots.txt lines. */
export function lintRobots(body: string, maxBytes: number = ROBOTS_MAX_BYTES): string[] {
  const problems: string[] = [];
  if (new TextEncoder().encode(body).byteLength > maxBytes) {
    const limit = maxBytes % 1024 === 0 ? `${maxBytes / 1024} KiB` : `${maxBytes} bytes`;
    problems.push(`file larger than ${limit}`);
  }
  let seenAgent = false;
  const lines = body.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length && problems.length < 20; i++) {
    const line = lines[i].replace(/#.*$/, "").trim();
    if (line === "") continue;
    const colon = line.indexOf(":");
    if (colon < 0) {
      problems.push(`line ${i + 1}: syntax not understood`);
      continue;
    }
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (!KNOWN.has(key)) {
      problems.push(`line ${i + 1}: unknown directive "${key}"`);
    } else if (key === "user-agent") {
      if (value === "") problems.push(`line ${i + 1}: empty User-agent`);
      seenAgent = true;
    } else if (key === "allow" || key === "disallow") {
      if (!seenAgent) problems.push(`line ${i + 1}: rule before any User-agent`);
      if (value !== "" && value[0] !== "/" && value[0] !== "*") {
        problems.push(`line ${i + 1}: pattern must start with "/" or "*"`);
      } else if (value.includes("$") && value.indexOf("$") !== value.length - 1) {
        problems.push(`line ${i + 1}: "$" must be last`);
      }
    } else if (key === "sitemap") {
      let ok = false;
      try {
        ok = /^(https?|ftp):$/.test(new URL(value).protocol);
      } catch {
        ok = false;
      }
      if (!ok) problems.push(`line ${i + 1}: Sitemap must be an absolute URL`);
    }
  }
  return problems;
}
