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

/**
 * A sitemap parser fed in pieces (`write` each decoded chunk, then `end`), so a large sitemap is
 * never held as one string. `onUrl`/`onSitemap` receive each `<loc>` as it closes.
 */
export class SitemapStream {
  root: string | null = null;
  totalEntries = 0;
  errors: string[] = [];
  private readonly parser: Parser;

  constructor(onUrl: (loc: string) => void, onSitemap: (loc: string) => void) {
    const stack: string[] = [];
    let locBuf: string | null = null;
    this.parser = new Parser({
      onopentag: (name) => {
        const n = localName(name);
        if (stack.length === 0 && this.root === null) this.root = n;
        stack.push(n);
        if (n === "loc") locBuf = "";
      },
      ontext: (text) => {
        if (locBuf !== null && locBuf.length < 4096) locBuf += text;
      },
      onclosetag: (name) => {
        const n = localName(name);
        const top = stack.pop();
        if (top !== n && this.errors.length < 5) this.errors.push(`mismatched </${n}>`);
        if (n === "loc" && locBuf !== null) {
          const parent = stack[stack.length - 1];
          const loc = locBuf.trim();
          locBuf = null;
          this.totalEntries++;
          if (parent === "url") onUrl(loc);
          else if (parent === "sitemap") onSitemap(loc);
        }
      },
      onend: () => {
        if (stack.length > 0) this.errors.push("unclosed elements");
      },
    }, { xmlMode: true, decodeEntities: true });
  }

  write(text: string): void {
    this.parser.write(text);
  }

  end(): void {
    this.parser.end();
  }
}

/** Parses one sitemap document, keeping at most `keep` locations. */
export function parseSitemap(xml: string, keep = SITEMAP_MAX_URLS): ParsedSitemap {
  const out: ParsedSitemap = { root: null, urls: [], sitemaps: [], totalEntries: 0, errors: [] };
  const room = () => out.urls.length + out.sitemaps.length < keep;
  const stream = new SitemapStream(
    (loc) => room() && out.urls.push(loc),
    (loc) => room() && out.sitemaps.push(loc),
  );
  stream.write(xml);
  stream.end();
  out.root = stream.root;
  out.totalEntries = stream.totalEntries;
  out.errors = stream.errors;
  return out;
}
