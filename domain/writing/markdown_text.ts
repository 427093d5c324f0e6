/**
 * Markdown → the plain-text units QA counts over (blocks, sentences, words, links).
 *
 * A deliberately small line parser for the markdown our writers emit (ATX headings, paragraphs,
 * lists, blockquotes, tables, fenced code). It is not CommonMark; it only needs to be stable and
 * fast, because QA must give the same number for the same text every time.
 */

import { NOTE_MARKER } from "./writer.ts";

export type BlockKind = "heading" | "paragraph" | "list_item" | "quote" | "note" | "table" | "code";

export interface Block {
  kind: BlockKind;
  /** Heading level 1–6; 0 for other blocks. */
  level: number;
  /** Plain text: inline markup removed, links replaced by their anchor text. */
  text: string;
}

export interface Link {
  text: string;
  url: string;
}

export interface ParsedMarkdown {
  blocks: Block[];
  links: Link[];
}

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const LIST_ITEM = /^\s*(?:[-*+]|\d{1,3}[.)])\s+(.*)$/;
const QUOTE = /^\s*>\s?(.*)$/;
const FENCE = /^\s*(```|~~~)/;
const TABLE_ROW = /^\s*\|.*\|\s*$/;
const TABLE_RULE = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

const LINK = /!?\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const AUTOLINK = /<(https?:\/\/[^>\s]+)>/g;

/** Parses markdown into blocks (plain text) and collects every link with its anchor text. */
export function parseMarkdown(markdown: string): ParsedMarkdown {
  const blocks: Block[] = [];
  const links: Link[] = [];
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  let para: string[] = [];
  let quote: string[] = [];
  let inCode = false;
  let code: string[] = [];

  const inline = (raw: string): string => toPlain(raw, links);
  const flushPara = () => {
    if (para.length) blocks.push({ kind: "paragraph", level: 0, text: inline(para.join(" ")) });
    para = [];
  };
  const flushQuote = () => {
    if (!quote.length) return;
    const text = inline(quote.join(" ")).trim();
    const isNote = text.startsWith(NOTE_MARKER);
    blocks.push({ kind: isNote ? "note" : "quote", level: 0, text });
    quote = [];
  };

  for (const line of lines) {
    if (FENCE.test(line)) {
      if (inCode) {
        blocks.push({ kind: "code", level: 0, text: code.join("\n") });
        code = [];
      } else {
        flushPara();
        flushQuote();
      }
      inCode = !inCode;
      continue;
    }
    if (inCode) {
      code.push(line);
      continue;
    }
    const q = QUOTE.exec(line);
    if (q) {
      flushPara();
      quote.push(q[1]);
      continue;
    }
    flushQuote();
    if (line.trim() === "") {
      flushPara();
      continue;
    }
    const h = HEADING.exec(line);
    if (h) {
      flushPara();
      blocks.push({ kind: "heading", level: h[1].length, text: inline(h[2]) });
      continue;
    }
    const li = LIST_ITEM.exec(line);
    if (li) {
      flushPara();
      blocks.push({ kind: "list_item", level: 0, text: inline(li[1]) });
      continue;
    }
    if (TABLE_ROW.test(line)) {
      flushPara();
      if (!TABLE_RULE.test(line)) {
        const cells = line.trim().replace(/^\||\|$/g, "").split("|").map((c) => inline(c.trim()));
        blocks.push({ kind: "table", level: 0, text: cells.join(" ") });
      }
      continue;
    }
    para.push(line.trim());
  }
  if (inCode) blocks.push({ kind: "code", level: 0, text: code.join("\n") });
  flushPara();
  flushQuote();
  return { blocks, links };
}

/** Strips inline markup; records links into `links` when given. */
export function toPlain(raw: string, links?: Link[]): string {
  let s = raw.replace(LINK, (_m, text: string, url: string) => {
    links?.push({ text: toPlain(text), url });
    return text;
  });
  s = s.replace(AUTOLINK, (_m, url: string) => {
    links?.push({ text: url, url });
    return url;
  });
  return s
    .replace(/<\/?[a-zA-Z][^>]*>/g, "")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/(\*\*|__)(.+?)\1/g, "$2")
    .replace(/(^|[\s(])[*_](\S(?:.*?\S)?)[*_](?=[\s).,;:!?]|$)/g, "$1$2")
    .replace(/\s+/g, " ")
    .trim();
}

const SENTENCE_BREAK = /(?<=[.!?…。？！])["'”’)]*\s+(?=["'“‘(¿¡]*[\p{Lu}\p{N}])/u;

/** Splits one block's text into sentences on terminal punctuation followed by a capital. */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const s of text.split(SENTENCE_BREAK)) {
    const t = s.trim();
    if (t) out.push(t);
  }
  return out;
}

const WORD = /[\p{L}\p{N}][\p{L}\p{M}\p{N}'’-]*/gu;

/** Words of a text, as written (case kept). Numbers count as words, as in every word counter. */
export function words(text: string): string[] {
  return text.match(WORD) ?? [];
}

/** Lower-cased words, the form every keyword match uses. */
export function lowerWords(text: string): string[] {
  return words(text.toLowerCase());
}

/** Word count of a markdown document's visible text (markup, URLs and code fences excluded). */
export function countWords(markdown: string): number {
  let n = 0;
  for (const b of parseMarkdown(markdown).blocks) if (b.kind !== "code") n += words(b.text).length;
  return n;
}
