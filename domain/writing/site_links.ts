/**
 * Internal links: which URLs count as the project's own, which of them the crawl fetched, and the
 * candidates a writer may link, ranked by how well they match the keyword. Shared by both writers,
 * the repair step and QA, so all of them agree on one rule: an internal link is a URL the crawl
 * fetched, scheme and port included, never one rebuilt from the host name.
 */

import type { ArticleBrief, SiteFacts, SitePage } from "./writer.ts";
import { contentWords, sameWord } from "./keyphrase.ts";
import { lowerWords } from "./markdown_text.ts";

/** Derived once per facts object: link checks run per link, and URL parsing is not free. */
const derived = new WeakMap<SiteFacts, { origin: string; hostKey: string }>();

function derive(facts: SiteFacts): { origin: string; hostKey: string } {
  let d = derived.get(facts);
  if (!d) {
    const key = hostKey(hostnameOf(facts.host));
    let origin = facts.origin ?? null;
    for (const p of origin ? [] : facts.pages) {
      try {
        const u = new URL(p.url);
        if (hostKey(u.hostname) === key) {
          origin = u.origin;
          break;
        }
      } catch { /* a malformed crawled URL is skipped */ }
    }
    d = { origin: origin ?? `https://${facts.host}`, hostKey: key };
    derived.set(facts, d);
  }
  return d;
}

/** Scheme, host and port relative links resolve against. */
export function siteOrigin(facts: SiteFacts): string {
  return derive(facts).origin;
}

/** Relative links and links to the project's host name (with or without `www.`) are internal. */
export function isInternal(url: string, facts: SiteFacts): boolean {
  if (url.startsWith("#") || url.startsWith("mailto:") || url.startsWith("tel:")) return false;
  if (!/^[a-z][a-z0-9+.-]*:/i.test(url) && !url.startsWith("//")) return true;
  try {
    const d = derive(facts);
    return hostKey(new URL(url, d.origin).hostname) === d.hostKey;
  } catch {
    return false;
  }
}

/** The absolute form of a link as a browser would request it (relative resolved, fragment cut). */
export function resolveLink(url: string, facts: SiteFacts): string | null {
  try {
    const u = new URL(url, siteOrigin(facts) + "/");
    u.hash = "";
    return u.href;
  } catch {
    return null;
  }
}

/** Looks up crawled pages by their exact URL and by a scheme-, `www.`- and slash-blind key. */
export interface CrawledIndex {
  /** True when the link resolves to exactly a URL the crawl fetched. */
  has(url: string): boolean;
  /** The crawled URL a near-miss link means (`https://` for an http site, a trailing slash), or null. */
  match(url: string): string | null;
}

export function crawledIndex(facts: SiteFacts): CrawledIndex {
  const exact = new Set<string>();
  const loose = new Map<string, string>();
  for (const p of facts.pages) {
    const href = resolveLink(p.url, facts);
    if (!href) continue;
    exact.add(href);
    const key = looseKey(href);
    if (key && !loose.has(key)) loose.set(key, p.url);
  }
  return {
    has: (url) => {
      const href = resolveLink(url, facts);
      return href !== null && exact.has(href);
    },
    match: (url) => {
      const href = resolveLink(url, facts);
      if (!href) return null;
      if (exact.has(href)) return href;
      const key = looseKey(href);
      return key ? loose.get(key) ?? null : null;
    },
  };
}

function looseKey(href: string): string | null {
  try {
    const u = new URL(href);
    return `${hostKey(u.hostname)}${u.pathname.replace(/\/+$/, "") || "/"}${u.search}`;
  } catch {
    return null;
  }
}

function hostKey(h: string): string {
  return h.toLowerCase().replace(/^www\./, "").replace(/\.$/, "");
}

/** `127.0.0.1:8080` → `127.0.0.1`; `[::1]:80` → `[::1]`. */
function hostnameOf(host: string): string {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return host;
  }
}

export interface LinkCandidate {
  url: string;
  /** Readable anchor text; never the exact keyphrase. */
  anchor: string;
  description: string | null;
  /** Keyword words matched in title, h1, description and URL. */
  relevance: number;
}

/**
 * Up to `limit` internal pages, most relevant first; ties broken by URL so output is stable.
 * Pages on other hosts and duplicate URLs are dropped.
 */
export function linkCandidates(brief: ArticleBrief, limit = 5): LinkCandidate[] {
  // The writer and QA both rank the same brief's pages: rank once per brief object.
  let ranked = rankedCache.get(brief);
  if (!ranked) rankedCache.set(brief, ranked = rankAll(brief));
  return ranked.slice(0, limit);
}

const rankedCache = new WeakMap<ArticleBrief, LinkCandidate[]>();

function rankAll(brief: ArticleBrief): LinkCandidate[] {
  const facts = brief.siteFacts;
  const host = facts.host;
  const kw = contentWords(brief.primaryKeyword, brief.language);
  const kwPhrase = lowerWords(brief.primaryKeyword).join(" ");
  const seen = new Set<string>();
  const out: LinkCandidate[] = [];
  for (const p of facts.pages) {
    if (!isInternal(p.url, facts)) continue;
    const key = resolveLink(p.url, facts);
    if (!key || seen.has(key)) continue;
    seen.add(key);
    out.push({
      url: p.url,
      anchor: anchorFor(p, kwPhrase, host),
      description: clean(p.description),
      relevance: relevance(p, kw),
    });
  }
  out.sort((a, b) =>
    b.relevance - a.relevance || a.url.length - b.url.length || (a.url < b.url ? -1 : 1)
  );
  return out;
}

function relevance(p: SitePage, kw: string[]): number {
  const text = lowerWords(
    `${p.title ?? ""} ${p.h1 ?? ""} ${p.description ?? ""} ${p.url.replace(/[/_.-]/g, " ")}`,
  );
  let n = 0;
  for (const k of kw) if (text.some((w) => sameWord(w, k))) n++;
  return n;
}

function anchorFor(p: SitePage, kwPhrase: string, host: string): string {
  let a = clean(p.title) ?? clean(p.h1) ?? pathLabel(p.url, host);
  if (a.length > 70) a = a.slice(0, 70).replace(/\s+\S*$/, "") + "…";
  // An anchor equal to the keyphrase competes with the article itself for that phrase.
  if (lowerWords(a).join(" ") === kwPhrase) a = `${a} (${host})`;
  return a.replace(/[[\]]/g, "");
}

function pathLabel(url: string, host: string): string {
  try {
    const path = new URL(url, `https://${host}/`).pathname.replace(/\/+$/, "");
    return path ? `${host}${path}` : `${host} home page`;
  } catch {
    return host;
  }
}

function clean(s: string | null): string | null {
  const t = s?.replace(/\s+/g, " ").trim();
  return t ? t : null;
}
