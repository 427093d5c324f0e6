/**
 * Mechanical repairs any writer can apply without a model: unlink internal links the crawl never
 * saw, drop repeated lines, strip leftover placeholders and fit the meta description. They fix
 * integrity failures QA would otherwise cap, and they never add content.
 */

import type { ArticleBrief, Draft } from "./writer.ts";
import { isInternal, normaliseUrl } from "./qa.ts";
import { lowerWords } from "./markdown_text.ts";

const LINK = /(!?)\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const PLACEHOLDERS =
  /\{\{[^}]*\}\}|\[\s*(?:insert|add|your|placeholder|enter|name of)\b[^\]]*\]|\b(?:TODO|TBD|FIXME)\b:?|lorem ipsum[^.]*\.?/gi;

/** Applies every repair; the result is the same for the same input. */
export function repairDraft(draft: Draft, brief: ArticleBrief): Draft {
  const markdown = dropRepeatedLines(stripPlaceholders(unlinkUnknown(draft.markdown, brief)));
  return {
    ...draft,
    title: draft.title.trim(),
    metaDescription: fitMeta(stripPlaceholders(draft.metaDescription).trim()),
    markdown,
  };
}

/** Internal links whose target is not a crawled page (or the home page) become plain text. */
export function unlinkUnknown(markdown: string, brief: ArticleBrief): string {
  const host = brief.siteFacts.host;
  const known = new Set([normaliseUrl(`https://${host}/`, host)]);
  for (const p of brief.siteFacts.pages) known.add(normaliseUrl(p.url, host));
  return markdown.replace(LINK, (m, bang: string, text: string, url: string) => {
    if (bang || !isInternal(url, host)) return m;
    return known.has(normaliseUrl(url, host)) ? m : text;
  });
}

function stripPlaceholders(s: string): string {
  return s.replace(PLACEHOLDERS, "").replace(/[ \t]{2,}/g, " ");
}

/** Removes a paragraph or list line that repeats an earlier one word for word. */
function dropRepeatedLines(markdown: string): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const line of markdown.split("\n")) {
    const key = lowerWords(line.replace(/^\s*(?:[-*+>]|\d+[.)])\s*/, "")).join(" ");
    if (key.split(" ").length >= 5 && !line.trimStart().startsWith("#")) {
      if (seen.has(key)) continue;
      seen.add(key);
    }
    out.push(line);
  }
  return out.join("\n").replace(/\n{3,}/g, "\n\n");
}

/** Cuts a too-long meta description at a word boundary so it ends within 156 characters. */
export function fitMeta(meta: string, max = 156): string {
  const chars = [...meta];
  if (chars.length <= max) return meta;
  const cut = chars.slice(0, max - 1).join("").replace(/\s+\S*$/, "").replace(/[,;:\s-]+$/, "");
  return `${cut}…`;
}
