/**
 * robots.txt path patterns (RFC 9309 §2.2.2–2.2.3): `*` matches any run of octets and a trailing
 * `$` anchors the end; everything else is literal.
 *
 * Matching is a greedy left-to-right `indexOf` over the literal segments between the `*`s, which
 * is exact for `*`-only globs (the leftmost occurrence of each segment leaves the most room for the
 * rest) and costs about one pass over the path per pattern. Matchers that try every split of the
 * path (backtracking RegExps, or robots-parser's length table: pattern × path steps per rule) cost
 * seconds per URL on a hostile file, which is why this module exists.
 *
 * V8's `indexOf` is linear only for short needles: its Boyer-Moore tables cover a needle's last
 * 250 characters, so `a…acaaa…a` (300 characters) against 2,000 `a`s took 0.5 ms per call. A
 * segment longer than `NATIVE_SEARCH_MAX` is searched with Knuth-Morris-Pratt instead (its table
 * built once, at most 4 bytes per octet of the file).
 *
 * Paths and patterns are compared as octet strings (one char per octet, 0–255): every `%XX` is
 * decoded and every non-ASCII character becomes its UTF-8 octets, on both sides. RFC 9309 §2.2.2
 * asks for "a consistent encoding" before comparison, and its table matches `%62%61%7A` with
 * `baz`, `ツ` with `%E3%83%84`, and `https://` with `https%3A%2F%2F`; decoding everything gives all
 * of those, and unlike comparing `%XX` triples it cannot match a literal `2F` inside an escape.
 *
 * @module
 */

/** One compiled Allow/Disallow pattern. */
export interface RobotsPattern {
  /** Octet strings between the wildcards (after `**` runs collapsed); `length - 1` wildcards. */
  segments: string[];
  /** The pattern ended in `$`: the last segment must end the path. */
  anchored: boolean;
  /** Octets in the pattern as written (RFC 9309: the most specific match has the most octets). */
  octets: number;
  /** Per segment: a KMP searcher when it is searched for and too long for `indexOf`, else null. */
  searchers: (Kmp | null)[];
}

/** A segment as octets with its KMP failure table (the length of each prefix's longest border). */
interface Kmp {
  needle: Uint8Array;
  table: Int32Array;
}

/** A path + query as octets, prepared for matching; its bytes are made on first need (KMP). */
export class OctetPath {
  private octets: Uint8Array | null = null;

  constructor(readonly text: string) {}

  get bytes(): Uint8Array {
    if (this.octets === null) {
      this.octets = new Uint8Array(this.text.length);
      for (let i = 0; i < this.text.length; i++) this.octets[i] = this.text.charCodeAt(i);
    }
    return this.octets;
  }
}

/** Longest segment searched with the native `indexOf` (well under V8's 250). */
export const NATIVE_SEARCH_MAX = 128;

const NEEDS_DECODING = /[%\u0080-\uffff]/;
const ESCAPE_OR_NON_ASCII = /%[0-9A-Fa-f]{2}|[\u0080-\uffff]+/g;
const encoder = new TextEncoder();

/**
 * The octet string of a path or pattern piece: `%XX` decoded, non-ASCII as UTF-8 octets (a lone
 * surrogate as U+FFFD), other characters kept. Linear: the RegExp has no nested quantifier.
 */
export function toOctets(s: string): string {
  if (!NEEDS_DECODING.test(s)) return s;
  return s.replace(ESCAPE_OR_NON_ASCII, (m) => {
    if (m.charCodeAt(0) === 0x25 && m.length === 3) {
      return String.fromCharCode(parseInt(m.slice(1), 16));
    }
    const bytes = encoder.encode(m);
    let out = "";
    for (let i = 0; i < bytes.length; i += 8192) {
      out += String.fromCharCode(...bytes.subarray(i, i + 8192));
    }
    return out;
  });
}

/** `**…*` runs are one wildcard; collapsing them changes nothing a pattern matches. */
export function collapseWildcards(raw: string): string {
  return raw.includes("**") ? raw.replace(/\*{2,}/g, "*") : raw;
}

/** Wildcards in a pattern once runs are collapsed (the number the matcher steps through). */
export function countWildcards(collapsed: string): number {
  let n = 0;
  for (let i = collapsed.indexOf("*"); i >= 0; i = collapsed.indexOf("*", i + 1)) n++;
  return n;
}

/**
 * Compiles a non-empty pattern as written after `Allow:` / `Disallow:`. A `$` is an anchor only
 * as the last character; elsewhere (or written `%24`) it is a literal `$`.
 */
export function compilePattern(raw: string): RobotsPattern {
  const anchored = raw.endsWith("$");
  const body = collapseWildcards(anchored ? raw.slice(0, -1) : raw);
  const segments = body.split("*").map(toOctets);
  const literal = segments.reduce((n, s) => n + s.length, 0);
  const wildcardsWritten = raw.length - raw.replaceAll("*", "").length;
  // The first segment is checked with startsWith and an anchored last one with endsWith.
  const searched = (i: number) => i > 0 && !(anchored && i === segments.length - 1);
  const searchers = segments.map((seg, i) =>
    searched(i) && seg.length > NATIVE_SEARCH_MAX ? kmp(seg) : null
  );
  return { segments, anchored, octets: literal + wildcardsWritten + (anchored ? 1 : 0), searchers };
}

function kmp(seg: string): Kmp {
  const needle = new Uint8Array(seg.length);
  for (let i = 0; i < seg.length; i++) needle[i] = seg.charCodeAt(i);
  const table = new Int32Array(seg.length);
  for (let i = 1, k = 0; i < needle.length; i++) {
    while (k > 0 && needle[i] !== needle[k]) k = table[k - 1];
    if (needle[i] === needle[k]) k++;
    table[i] = k;
  }
  return { needle, table };
}

/** First index of `seg` in the path at or after `from`; with KMP in at most 2 × (path) steps. */
function find(path: OctetPath, seg: string, searcher: Kmp | null, from: number): number {
  if (searcher === null) return path.text.indexOf(seg, from);
  const { needle, table } = searcher;
  const hay = path.bytes;
  for (let i = from, k = 0; i < hay.length; i++) {
    const c = hay[i];
    while (k > 0 && needle[k] !== c) k = table[k - 1];
    if (needle[k] === c && ++k === needle.length) return i - k + 1;
  }
  return -1;
}

/** Whether a compiled pattern matches an octet path (path + query), from its first octet. */
export function matchesPattern(p: RobotsPattern, subject: OctetPath): boolean {
  const path = subject.text;
  const s = p.segments;
  const first = s[0];
  if (!path.startsWith(first)) return false;
  const last = s.length - 1;
  if (last === 0) return p.anchored ? path.length === first.length : true;
  let at = first.length;
  for (let i = 1; i < last; i++) {
    const seg = s[i];
    const found = find(subject, seg, p.searchers[i], at);
    if (found < 0) return false;
    at = found + seg.length;
  }
  const tail = s[last];
  if (p.anchored) return path.length - tail.length >= at && path.endsWith(tail);
  return tail === "" || find(subject, tail, p.searchers[last], at) >= 0;
}
