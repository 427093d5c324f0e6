/**
 * Internal-link candidates from the project's crawled pages, ranked by how well they match the
 * keyword. Shared by both writers so the built-in draft and the model prompt link to the same,
 * real pages, and by the repair step that unlinks anything the crawl never saw.
 */

import type { ArticleBrief, SitePage } from "./writer.ts";
import { contentWords, sameWord } from "./keyphrase.ts";
import { lowerWords } from "./markdown_text.ts";
import { isInternal, normaliseUrl } from "./qa.ts";

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
  const host = brief.siteFacts.host;
  const kw = contentWords(brief.primaryKeyword, brief.language);
  const kwPhrase = lowerWords(brief.primaryKeyword).join(" ");
  const seen = new Set<string>();
  const out: LinkCandidate[] = [];
  for (const p of brief.siteFacts.pages) {
    if (!isInternal(p.url, host)) continue;
    const key = normaliseUrl(p.url, host);
    if (seen.has(key)) continue;
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
  return out.slice(0, limit);
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
