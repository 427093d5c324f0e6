/**
 * The User-Agent presets an audit may crawl as (`user_agent` option). Each preset sends a
 * User-Agent that names this crawler honestly (SerpwrightBot and its info URL) and adds the
 * token of the crawler it stands in for, so a site that serves search engines differently (by
 * User-Agent) answers as it would answer that crawler; robots.txt is read for that crawler's
 * product token (RFC 9309 group selection), so the audit sees what that crawler may fetch.
 *
 * It never claims to BE Googlebot or Bingbot: a site that verifies crawlers by reverse DNS (as
 * Google and Bing ask) will not take it for one, and the site's logs show who asked.
 *
 * Rendered pages (`render: true`) ask as the same preset from the browser (`browserUserAgent`): a
 * real Chrome User-Agent (sites serve their normal JavaScript to it) in the form the crawler's own
 * renderer uses, with the same honest self-identification, so the raw crawl and the rendering see
 * the same site.
 *
 * @module
 */
import type { UserAgentPreset } from "./types.ts";
import { BOT_TOKEN, USER_AGENT } from "./robots.ts";

/** The presets, in the order the API documents them; `serpwright` is the default. */
export const USER_AGENT_PRESETS = [
  "serpwright",
  "googlebot_smartphone",
  "googlebot_desktop",
  "bingbot",
] as const satisfies readonly UserAgentPreset[];

export type { UserAgentPreset };

/** What a preset sends and which robots.txt group it obeys. */
export interface CrawlerIdentity {
  preset: UserAgentPreset;
  /** The User-Agent header of every request of the crawl. */
  userAgent: string;
  /** The product token robots.txt rules (and Crawl-delay) are read for. */
  robotsToken: string;
}

/** Our own name, contact URL included: part of every preset's User-Agent. */
const SELF = `${BOT_TOKEN}/1.0; +https://serpwright.com/bot`;
const CHROME = "Chrome/140.0.0.0";

const IDENTITIES: Record<UserAgentPreset, CrawlerIdentity> = {
  serpwright: { preset: "serpwright", userAgent: USER_AGENT, robotsToken: BOT_TOKEN },
  googlebot_smartphone: {
    preset: "googlebot_smartphone",
    userAgent: "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) " +
      `${CHROME} Mobile Safari/537.36 (compatible; Googlebot/2.1; ${SELF})`,
    robotsToken: "Googlebot",
  },
  googlebot_desktop: {
    preset: "googlebot_desktop",
    userAgent: `Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; ` +
      `${SELF}) ${CHROME} Safari/537.36`,
    robotsToken: "Googlebot",
  },
  bingbot: {
    preset: "bingbot",
    userAgent: `Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; ` +
      `${SELF}) ${CHROME} Safari/537.36`,
    robotsToken: "bingbot",
  },
};

/** The identity of a preset; absent (or unknown, from an older record) is our own. */
export function crawlerIdentity(preset?: string | null): CrawlerIdentity {
  return IDENTITIES[preset as UserAgentPreset] ?? IDENTITIES.serpwright;
}

/**
 * The User-Agent of the browser that renders an audit's pages for `preset`: Chrome's form as the
 * crawler's own renderer sends it (Google's smartphone renderer: a Nexus 5X Chrome with
 * `(compatible; Googlebot/2.1; ...)`; the desktop presets' User-Agents already are Chrome's desktop
 * form), our name and contact URL where the crawler puts its own. Only the string follows the
 * preset: the renderer's viewport stays the mobile one (domain/render/renderer.ts).
 */
export function browserUserAgent(preset?: string | null): string {
  const identity = crawlerIdentity(preset);
  switch (identity.preset) {
    case "serpwright":
      return "Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 " +
        `(KHTML, like Gecko) ${CHROME} Mobile Safari/537.36 (compatible; ${SELF})`;
    case "googlebot_smartphone":
      return "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 " +
        `(KHTML, like Gecko) ${CHROME} Mobile Safari/537.36 (compatible; Googlebot/2.1; ${SELF})`;
    default:
      return identity.userAgent;
  }
}
