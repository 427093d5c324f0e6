/**
 * A draft's markdown as HTML for its preview, with `markdown-it` (MIT, the CommonMark parser most
 * used on npm) configured for text we do not trust, since a draft is model output:
 *
 * - `html: false`: raw HTML in the markdown is shown as text, never as markup;
 * - links: only http(s) after resolving against the project's site (so a relative link points at
 *   the page it names on the site), anything else (`javascript:`, `data:`, `vbscript:`, a scheme
 *   hidden behind entities or tabs) stays plain text; every link gets
 *   `rel="nofollow noopener noreferrer ugc"`;
 * - images become links to the image (the page's policy loads no image from elsewhere);
 * - no `style` attribute (table alignment), so the strict style policy has nothing to refuse;
 * - headings start below the page's own and never skip a level (an accessible outline).
 *
 * The links that stay on the project's host are collected: the preview lists the internal
 * links the draft uses.
 *
 * @module
 */
import MarkdownIt, { type Env, type Token } from "markdown-it";

/** A link of the draft that stays on the project's site. */
export interface DraftLink {
  href: string;
  text: string;
}

interface RenderEnv extends Env {
  base: string;
  host: string | null;
  links: DraftLink[];
  /** The page heading level the draft's top level maps to. */
  top: number;
}

/** The absolute http(s) URL a draft's link points at, or null when it may not be a link. */
export function resolveDraftLink(href: string, base: string): string | null {
  if (href === "") return null;
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return null;
  }
  return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
}

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
// Only what could become an http(s) link survives parsing; the renderer decides for good
// once it knows the base.
md.validateLink = (url: string) => resolveDraftLink(url, "https://draft.invalid/") !== null;

/** The text inside a link, for the internal links list. */
function linkText(tokens: Token[], from: number): string {
  let text = "";
  for (let j = from; j < tokens.length && tokens[j].type !== "link_close"; j++) {
    text += tokens[j].content;
  }
  return text.trim();
}

/** Marks the `link_close` matching the `link_open` at `idx` (same level) as not a link. */
function killClose(tokens: Token[], idx: number): void {
  const level = tokens[idx].level;
  for (let j = idx + 1; j < tokens.length; j++) {
    if (tokens[j].type === "link_close" && tokens[j].level === level) {
      tokens[j].meta = { ...(tokens[j].meta ?? {}), dead: true };
      return;
    }
  }
}

md.renderer.rules.link_open = (tokens, idx, options, renderEnv, self) => {
  const env = renderEnv as unknown as RenderEnv;
  const token = tokens[idx];
  const href = resolveDraftLink(String(token.attrGet("href") ?? ""), env.base);
  if (href === null) {
    killClose(tokens, idx);
    return "";
  }
  token.attrSet("href", href);
  token.attrSet("rel", "nofollow noopener noreferrer ugc");
  if (env.host !== null && new URL(href).host === env.host) {
    env.links.push({ href, text: linkText(tokens, idx + 1) });
  }
  return self.renderToken(tokens, idx, options);
};

md.renderer.rules.link_close = (tokens, idx, options, _env, self) =>
  tokens[idx].meta?.dead ? "" : self.renderToken(tokens, idx, options);

md.renderer.rules.image = (tokens, idx, _options, renderEnv) => {
  const env = renderEnv as unknown as RenderEnv;
  const token = tokens[idx];
  const alt = md.utils.escapeHtml(token.content || "image");
  const src = resolveDraftLink(String(token.attrGet("src") ?? ""), env.base);
  return src === null
    ? `[${alt}]`
    : `<a href="${
      md.utils.escapeHtml(src)
    }" rel="nofollow noopener noreferrer ugc">Image: ${alt}</a>`;
};

for (const rule of ["th_open", "td_open"] as const) {
  md.renderer.rules[rule] = (tokens, idx, options, _env, self) => {
    const token = tokens[idx];
    if (token.attrs) token.attrs = token.attrs.filter(([name]) => name !== "style");
    return self.renderToken(tokens, idx, options);
  };
}

/** Headings below the page's own, each at most one level deeper than the one before. */
function shiftHeadings(tokens: Token[], top: number): void {
  let last = top - 1;
  const open: number[] = [];
  for (const t of tokens) {
    if (t.type === "heading_open") {
      const wanted = Number(t.tag.slice(1)) + top - 1;
      const level = Math.min(6, Math.max(top, Math.min(wanted, last + 1)));
      t.tag = `h${level}`;
      open.push(level);
      last = level;
    } else if (t.type === "heading_close") {
      t.tag = `h${open.pop() ?? top}`;
    }
  }
}

/**
 * The draft as HTML, and the links it makes to the project's own site. `base` is the project's
 * URL (relative links resolve against it); `top` the heading level of the draft's first level.
 */
export function renderDraft(
  markdown: string,
  base: string,
  top = 3,
): { html: string; internalLinks: DraftLink[] } {
  let host: string | null = null;
  try {
    host = new URL(base).host;
  } catch {
    base = "https://draft.invalid/";
  }
  const env: RenderEnv = { base, host, links: [], top };
  const tokens = md.parse(markdown, env);
  shiftHeadings(tokens, top);
  const out = md.renderer.render(tokens, md.options, env);
  const seen = new Set<string>();
  const internalLinks = env.links.filter((l) => !seen.has(l.href) && seen.add(l.href));
  return { html: out, internalLinks };
}
