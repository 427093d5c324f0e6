/**
 * Mechanical repairs any writer can apply without a model. Each one leaves text a reader can use
 * as it stands, so it never hides a defect from QA:
 * - an internal link that means a crawled page (another scheme, `www.`, a trailing slash, a
 *   relative path) is pointed at the exact URL the crawl fetched; one the crawl never saw becomes
 *   plain text (its anchor text still reads);
 * - a paragraph or list line repeating an earlier one word for word is dropped;
 * - a too-long meta description is cut at a word boundary.
 *
 * Placeholders ("costs [insert price].") are deliberately NOT touched: deleting one leaves a hole
 * ("costs .") that no check can see any more. QA sees them as the model wrote them, fails
 * `no_placeholders`, and the one revision gets them back as feedback.
 */

import type { ArticleBrief, Draft } from "./writer.ts";
import { crawledIndex, isInternal } from "./site_links.ts";
import { lowerWords } from "./markdown_text.ts";

const LINK = /(!?)\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

/** Applies every repair; the result is the same for the same input. */
export function repairDraft(draft: Draft, brief: ArticleBrief): Draft {
  const markdown = dropRepeatedLines(fixInternalLinks(draft.markdown, brief));
  return {
    ...draft,
    title: draft.title.trim(),
    metaDescription: fitMeta(draft.metaDescription.trim()),
    markdown,
  };
}

/**
 * Internal links end up as a URL the crawl fetched, scheme included, or as plain text: a link
 * to `https://host/` on a site crawled over http is rewritten to the crawled `http://host/`.
 */
export function fixInternalLinks(markdown: string, brief: ArticleBrief): string {
  const facts = brief.siteFacts;
  const index = crawledIndex(facts);
  return markdown.replace(LINK, (m, bang: string, text: string, url: string) => {
    if (bang || !isInternal(url, facts)) return m;
    const crawled = index.match(url);
    return crawled ? `[${text}](${crawled})` : text;
  });
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
