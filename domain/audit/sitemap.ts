/**
 * A small streaming sitemap reader (htmlparser2 in xmlMode): no npm sitemap reader is pinned in
 * the import map, and the format is tiny. It reports what the sitemap checks need: the root
 * element, the `<loc>` values, and whether the file breaks the protocol's limits.
 *
 * @module
 */
import { Parser } from "htmlparser2";

export const SITEMAP_MAX_URLS = 50_000;
export const SITEMAP_MAX_BYTES = 50 * 1024 * 1024;

export interface ParsedSitemap {
  /** "urlset", "sitemapindex", or whatever else the root was (invalid). */
  root: string | null;
  /** `<loc>` of `<url>` entries (urlset). */
  urls: string[];
  /** `<loc>` of `<sitemap>` entries (sitemapindex). */
  sitemaps: string[];
  /** Entries beyond what we keep (counts toward the 50,000 limit). */
  totalEntries: number;
  /** Well-formedness problems seen while parsing. */
  errors: string[];
}

function localName(name: string): string {
  const i = name.indexOf(":");
  return (i >= 0 ? name.slice(i + 1) : name).toLowerCase();
}

/** Parses one sitemap document, keeping at most `keep` locations. */
export function parseSitemap(xml: string, keep = SITEMAP_MAX_URLS): ParsedSitemap {
  const out: ParsedSitemap = { root: null, urls: [], sitemaps: [], totalEntries: 0, errors: [] };
  const stack: string[] = [];
  let locBuf: string | null = null;
  const parser = new Parser({
    onopentag(name) {
      const n = localName(name);
      if (stack.length === 0 && out.root === null) out.root = n;
      stack.push(n);
      if (n === "loc") locBuf = "";
    },
    ontext(text) {
      if (locBuf !== null) locBuf += text;
    },
    onclosetag(name) {
      const n = localName(name);
      const top = stack.pop();
      if (top !== n) out.errors.push(`mismatched </${n}>`);
      if (n === "loc" && locBuf !== null) {
        const parent = stack[stack.length - 1];
        const loc = locBuf.trim();
        locBuf = null;
        out.totalEntries++;
        if (out.urls.length + out.sitemaps.length < keep) {
          if (parent === "url") out.urls.push(loc);
          else if (parent === "sitemap") out.sitemaps.push(loc);
        }
      }
    },
  }, { xmlMode: true, decodeEntities: true });
  parser.end(xml);
  if (stack.length > 0) out.errors.push("unclosed elements");
  return out;
}
