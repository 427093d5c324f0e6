/**
 * Fragment facts for `broken_fragment`: the anchors a page offers (`id=` on any element and
 * `<a name=>`, as 32-bit hashes, at most MAX_ANCHORS) and the links with a `#fragment` it makes
 * to pages of the site, its own included (`#section`), at most MAX_FRAGMENT_LINKS distinct ones.
 * The finalize pass (crawl/finalize/fragments.ts) joins them site-wide from KV.
 *
 * What counts as a fragment worth checking (docs/audit.md "Fragments"): not `#` alone, not
 * `#top` (the standard scrolls to the top without an element), not a text fragment
 * (`#:~:text=`, its directive is not an anchor) and not a hash-bang route (`#!/path`, read by
 * scripts, not scrolled to).
 *
 * The `id=` of any element is noted by the dispatcher (extract.ts calls `noteAnchor`), since a
 * family registered on every tag would cost a map lookup per element; `<a name>` here.
 *
 * @module
 */
import type { FactCollector } from "./collector.ts";

/** What this family adds to the page's facts. */
export interface FragmentFacts {
  /**
   * Anchors the page offers (`id=` on any element, `<a name=>`): 32-bit hashes (`anchorHash`),
   * at most MAX_ANCHORS; `anchorsOverCap` when more were left out.
   */
  anchors: number[];
  anchorsOverCap: boolean;
  /**
   * Links with a `#fragment` to pages of the site (the page itself included): each target
   * (canonical, without the fragment) and its fragment as written, distinct, at most
   * MAX_FRAGMENT_LINKS (`#`, `#top`, text fragments and `#!` routes are not kept).
   */
  fragmentTargets: string[];
  fragments: string[];
}

/** Anchors kept per page; past it the page's set is incomplete and not judged against. */
export const MAX_ANCHORS = 2_000;
/** Distinct fragment links kept per page (target and fragment). */
export const MAX_FRAGMENT_LINKS = 50;
/** A fragment longer than this is not kept (no real anchor is this long). */
const MAX_FRAGMENT_CHARS = 200;

/** 32-bit FNV-1a of a string's UTF-16 units: anchors are compared by this hash. */
export function anchorHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Notes an anchor name (an `id` or `<a name>` value as the parser decoded it). */
export function noteAnchor(f: FragmentFacts, value: string): void {
  if (value === "") return; // an empty id is no anchor
  if (f.anchors.length >= MAX_ANCHORS) {
    f.anchorsOverCap = true;
    return;
  }
  f.anchors.push(anchorHash(value));
}

/**
 * The fragment a link points at, if it is one to check: raw (as written after `#`), or null for
 * `#`, `#top`, text fragments, hash-bang routes and overlong ones.
 */
export function checkedFragment(raw: string): string | null {
  if (raw === "" || raw.length > MAX_FRAGMENT_CHARS) return null;
  if (raw.length === 3 && raw.toLowerCase() === "top") return null;
  if (raw.charCodeAt(0) === 33 /* ! */) return null;
  if (raw.startsWith(":~:")) return null;
  // A text directive after an anchor ("#sec:~:text=x") leaves the anchor.
  const d = raw.indexOf(":~:");
  return d < 0 ? raw : raw.slice(0, d);
}

/** Notes a link to `target` (canonical, without its fragment) at `fragment` (from checkedFragment). */
export function noteFragmentLink(f: FragmentFacts, target: string, fragment: string): void {
  const ts = f.fragmentTargets;
  const fs = f.fragments;
  for (let i = 0; i < ts.length; i++) if (fs[i] === fragment && ts[i] === target) return;
  if (ts.length >= MAX_FRAGMENT_LINKS) return;
  ts.push(target);
  fs.push(fragment);
}

/**
 * The names an anchor fragment can match (html.spec.whatwg.org, "find a potential indicated
 * element"): the percent-decoded fragment, and the raw one as browsers also try it.
 */
export function fragmentNames(fragment: string): string[] {
  let decoded = fragment;
  try {
    decoded = decodeURIComponent(fragment);
  } catch {
    // Not valid UTF-8 once decoded: the raw form is all a browser can match.
  }
  return decoded === fragment ? [fragment] : [decoded, fragment];
}

export const fragmentFacts: FactCollector<FragmentFacts> = {
  id: "fragments",
  tags: ["a"],
  init: () => ({ anchors: [], anchorsOverCap: false, fragmentTargets: [], fragments: [] }),
  start: (p) => ({
    open(_name, a) {
      if (a.name !== undefined) noteAnchor(p.f, a.name);
    },
  }),
};
