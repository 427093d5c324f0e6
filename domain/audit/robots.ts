/**
 * robots.txt reading: rule matching through npm `robots-parser` (well-tested edge cases), plus
 * a small linter for the lines Lighthouse's robots-txt audit rejects, which the parser silently
 * skips.
 *
 * @module
 */
import robotsParser from "robots-parser";

/** Our product token; rules are matched on it, never on the full User-Agent string. */
export const BOT_TOKEN = "SerpwrightBot";
export const USER_AGENT = `Mozilla/5.0 (compatible; ${BOT_TOKEN}/1.0; +https://serpwright.com/bot)`;

/** Google's robots.txt size cap. */
export const ROBOTS_MAX_BYTES = 500 * 1024;

export type RobotsState = "ok" | "missing" | "unreachable";

export interface Robots {
  state: RobotsState;
  /** HTTP status of the final response; 0 when unreachable. */
  status: number;
  isAllowed(url: string, agent?: string): boolean;
  /** Crawl-delay for our token (or `*`), seconds; 0 when none. */
  crawlDelay: number;
  sitemaps: string[];
  /** Lines a strict reader rejects (empty when valid). */
  problems: string[];
}

interface Parsed {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
  getSitemaps(): string[];
}

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
]);

/** Builds a Robots from the fetched file (state "ok") or an allow-all stand-in. */
export function makeRobots(
  robotsUrl: string,
  state: RobotsState,
  status: number,
  body: string,
): Robots {
  // A missing or unreachable file means "allow all" for crawling (seonaut, Google after 4xx);
  // the unreachable case is still reported as a critical issue.
  const text = state === "ok" ? body : "";
  const parsed = (robotsParser as unknown as (u: string, t: string) => Parsed)(robotsUrl, text);
  const delay = parsed.getCrawlDelay(BOT_TOKEN);
  return {
    state,
    status,
    isAllowed: (url, agent = BOT_TOKEN) => parsed.isAllowed(url, agent) !== false,
    crawlDelay: typeof delay === "number" && Number.isFinite(delay) && delay > 0 ? delay : 0,
    sitemaps: parsed.getSitemaps(),
    problems: state === "ok" ? lintRobots(body) : [],
  };
}

/** Lighthouse-style validation of robots.txt lines. */
export function lintRobots(body: string): string[] {
  const problems: string[] = [];
  if (new TextEncoder().encode(body).byteLength > ROBOTS_MAX_BYTES) {
    problems.push("file larger than 500 KiB");
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
