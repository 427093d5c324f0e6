/**
 * The docs pages as Markdown, for `Accept: text/markdown` (issue 33): the page's `<main>` walked
 * once with htmlparser2 (headings, paragraphs, lists, tables, links, code and code blocks; the
 * site navigation, head and footer left out). The pages are our own templates, so the mapping
 * only covers the elements they use; anything else contributes its text.
 *
 * @module
 */
import { Parser } from "htmlparser2";

/** Whether `accept` prefers Markdown to HTML (an explicit `text/markdown`, not below HTML's q). */
export function wantsMarkdown(accept: string | undefined | null): boolean {
  if (!accept) return false;
  let md = -1;
  let html = -1;
  for (const part of accept.split(",")) {
    const [type, ...params] = part.trim().toLowerCase().split(";");
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (type === "text/markdown") md = Math.max(md, q);
    if (type === "text/html") html = Math.max(html, q);
  }
  return md > 0 && md >= html;
}

/** The `<main>` of a page of ours as Markdown. */
export function htmlToMarkdown(page: string): string {
  const out: string[] = [];
  let inMain = false;
  let pre = 0;
  let code = 0;
  let depth = 0;
  const links: string[] = [];
  let row = 0;
  let cells = 0;
  // Set right after an opening marker (`, **, [, a cell's space): the text's leading space goes.
  let opened = false;
  const emit = (s: string) => {
    opened = false;
    out.push(s);
  };
  const open = (s: string) => {
    out.push(s);
    opened = true;
  };
  const tail = () => out.length ? out[out.length - 1] : "\n";
  const parser = new Parser({
    onopentag(name, attrs) {
      if (name === "main") inMain = true;
      if (!inMain) return;
      const h = /^h([1-6])$/.exec(name);
      if (h) emit(`\n\n${"#".repeat(Number(h[1]))} `);
      else if (name === "p" || name === "div" || name === "section") emit("\n\n");
      else if (name === "br") emit("\n");
      else if (name === "ul" || name === "ol") {
        depth++;
        emit("\n");
      } else if (name === "li") emit(`\n${"  ".repeat(Math.max(0, depth - 1))}- `);
      else if (name === "pre") {
        pre++;
        emit("\n\n```\n");
      } else if (name === "code" && pre === 0) {
        code++;
        open("`");
      } else if (name === "strong" || name === "b") open("**");
      else if (name === "em" || name === "i") open("_");
      else if (name === "a") {
        links.push(attrs.href ?? "");
        open("[");
      } else if (name === "span" && !/\s$/.test(tail())) emit(" ");
      else if (name === "table") {
        row = 0;
        emit("\n");
      } else if (name === "tr") {
        cells = 0;
        emit("\n|");
      } else if (name === "td" || name === "th") {
        cells++;
        open(" ");
      }
    },
    ontext(text) {
      if (!inMain) return;
      if (pre > 0) return emit(text);
      // Markup named in prose (the check reference's "<h1>") stays text in Markdown too.
      let t = text.replace(/\s+/g, " ");
      if (code === 0) t = t.replaceAll("<", "\\<");
      if (opened || /\s$/.test(tail())) t = t.trimStart();
      if (t) emit(t);
    },
    onclosetag(name) {
      if (!inMain) return;
      if (name === "main") {
        inMain = false;
        return;
      }
      if (/^h[1-6]$/.test(name) || name === "p") emit("\n\n");
      else if (name === "ul" || name === "ol") {
        depth = Math.max(0, depth - 1);
        emit("\n");
      } else if (name === "pre") {
        pre = Math.max(0, pre - 1);
        emit(tail().endsWith("\n") ? "```\n\n" : "\n```\n\n");
      } else if (name === "code" && pre === 0) {
        code = Math.max(0, code - 1);
        emit("`");
      } else if (name === "strong" || name === "b") emit("**");
      else if (name === "em" || name === "i") emit("_");
      else if (name === "a") emit(`](${links.pop() ?? ""})`);
      else if (name === "td" || name === "th") emit(" |");
      else if (name === "tr") {
        if (row === 0) emit(`\n|${" --- |".repeat(cells)}`);
        row++;
      } else if (name === "table") emit("\n\n");
    },
  }, { decodeEntities: true });
  parser.write(page);
  parser.end();
  // Blank runs collapse, trailing spaces go (code blocks keep their own lines).
  return out.join("").split(/(\n```\n[\s\S]*?\n```\n)/).map((part, i) =>
    i % 2 === 1 ? part : part.replace(/[ \t]+\n/g, "\n").replace(/\n{3,}/g, "\n\n")
  ).join("").trim() + "\n";
}
