/**
 * The subresources a page loads from its own site, as `broken_resources` sees them: which element
 * and attribute reference each (a small table, so a page's list stores one number per reference),
 * and the two references that need more than reading an attribute: `srcset` candidate lists and
 * the `url()` sources of `@font-face` rules in inline `<style>` blocks.
 *
 * Frames (`<frame src>`, `<iframe src>`) are on the list too: they are crawled as pages, and a
 * failing one is charged here, as a broken resource of the page that embeds it.
 *
 * @example
 * ```ts
 * srcsetUrls("/a.png 1x, /a@2x.png 2x"); // ["/a.png", "/a@2x.png"]
 * RESOURCE_ELEMENTS[RESOURCE_KIND["img src"]].element; // "img"
 * ```
 *
 * @module
 */

/** What references a resource: the element and its attribute, as evidence names them. */
export interface ResourceElement {
  /** The parser's name for it (RESOURCE_KIND). */
  key: string;
  element: string;
  attribute: string;
  /** A frame source: crawled as a page, judged by its page record. */
  frame?: true;
}

/** The references read, in a fixed order (stored by index: never reorder, only append). */
export const RESOURCE_ELEMENTS: readonly ResourceElement[] = [
  { key: "img src", element: "img", attribute: "src" },
  { key: "img srcset", element: "img", attribute: "srcset" },
  { key: "source src", element: "source", attribute: "src" },
  { key: "source srcset", element: "source", attribute: "srcset" },
  { key: "video src", element: "video", attribute: "src" },
  { key: "video poster", element: "video", attribute: "poster" },
  { key: "audio src", element: "audio", attribute: "src" },
  { key: "track src", element: "track", attribute: "src" },
  { key: "script src", element: "script", attribute: "src" },
  { key: "link stylesheet", element: "link rel=stylesheet", attribute: "href" },
  { key: "link icon", element: "link rel=icon", attribute: "href" },
  { key: "link preload", element: "link rel=preload", attribute: "href" },
  { key: "link modulepreload", element: "link rel=modulepreload", attribute: "href" },
  { key: "style font-face", element: "style", attribute: "@font-face src" },
  { key: "iframe src", element: "iframe", attribute: "src", frame: true },
  { key: "frame src", element: "frame", attribute: "src", frame: true },
  { key: "embed src", element: "embed", attribute: "src" },
  { key: "object data", element: "object", attribute: "data" },
  { key: "input src", element: "input type=image", attribute: "src" },
];

/** Index of each reference in RESOURCE_ELEMENTS, by its key ("img src"). */
export const RESOURCE_KIND: Readonly<Record<string, number>> = Object.fromEntries(
  RESOURCE_ELEMENTS.map((e, i) => [e.key, i]),
);

/** Kinds that are frame sources (crawled as pages). */
export const FRAME_KINDS: ReadonlySet<number> = new Set(
  RESOURCE_ELEMENTS.flatMap((e, i) => (e.frame ? [i] : [])),
);

/** Candidates read from one srcset: a hostile page may list thousands. */
const SRCSET_MAX = 8;

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 12 || c === 13;

/**
 * The URLs of a `srcset` (or `imagesrcset`), by the HTML standard's candidate parsing: a URL runs
 * to whitespace, trailing commas end it, and descriptors run to a comma outside parentheses.
 */
export function srcsetUrls(srcset: string, max = SRCSET_MAX): string[] {
  const out: string[] = [];
  const s = srcset;
  let i = 0;
  while (i < s.length && out.length < max) {
    while (i < s.length && (isSpace(s.charCodeAt(i)) || s[i] === ",")) i++;
    if (i >= s.length) break;
    const start = i;
    while (i < s.length && !isSpace(s.charCodeAt(i))) i++;
    let url = s.slice(start, i);
    if (url.endsWith(",")) {
      url = url.replace(/,+$/, "");
    } else {
      // Descriptors: up to a comma that is not inside parentheses.
      let depth = 0;
      while (i < s.length) {
        const c = s[i];
        if (c === "(") depth++;
        else if (c === ")") depth = Math.max(0, depth - 1);
        else if (c === "," && depth === 0) break;
        i++;
      }
    }
    if (url !== "") out.push(url);
  }
  return out;
}

/** Sources read from one page's inline styles (a hostile page may declare thousands). */
const FONT_FACE_MAX = 10;
const FONT_FACE = /@font-face\s*\{([^}]*)\}/gi;
const CSS_URL = /url\(\s*(?:"([^"]*)"|'([^']*)'|([^)\s]*))\s*\)/gi;

/** The `url()` sources of the `@font-face` rules of a stylesheet's text. */
export function fontFaceUrls(css: string, max = FONT_FACE_MAX): string[] {
  const out: string[] = [];
  if (!/@font-face/i.test(css)) return out;
  for (const rule of css.matchAll(FONT_FACE)) {
    for (const m of rule[1].matchAll(CSS_URL)) {
      const url = (m[1] ?? m[2] ?? m[3] ?? "").trim();
      if (url !== "" && !url.startsWith("data:")) out.push(url);
      if (out.length >= max) return out;
    }
  }
  return out;
}
