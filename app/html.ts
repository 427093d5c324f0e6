/**
 * Building HTML from untrusted text: a tagged template that escapes every interpolation unless
 * it is markup this code built (`Html`), and the one rule for links to URLs that came from
 * outside (a crawled site, a model's draft): only absolute http(s) URLs become links. Shared by
 * the public pages (routes/pages/) and the reports and previews (app/reports/).
 *
 * @module
 */

/** Markup that is already safe (built from escaped parts). */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Escapes text for an HTML text node or a quoted attribute value. */
export function esc(value: unknown): string {
  return String(value)
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

/**
 * Tagged template: interpolations are escaped unless they are `Html` (or arrays of `Html`).
 *
 * @example
 * ```ts
 * declare const userText: string;
 * html`<p>${userText}</p>`; // userText is escaped
 * ```
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) {
    out += render(values[i]) + strings[i + 1];
  }
  return new Html(out);
}

function render(v: unknown): string {
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join("");
  if (v === null || v === undefined || v === false) return "";
  return esc(v);
}

/** Trusted markup, e.g. a constant string of tags. */
export function raw(markup: string): Html {
  return new Html(markup);
}

/**
 * The URL as a link target when it is an absolute http(s) URL (normalised by the URL parser, so
 * no control character or quote survives unescaped), else null: `javascript:`, `data:` and
 * anything unparsable stay text.
 */
export function safeHref(url: unknown): string | null {
  if (typeof url !== "string" || url.length > 4096) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
}

/** Text cut to `max` characters with an ellipsis. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
