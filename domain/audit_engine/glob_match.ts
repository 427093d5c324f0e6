/**
 * Matching a path glob (`*` within a segment, `**` across segments, everything else literal)
 * against a whole path in about one pass, with no regular expression and no backtracking over
 * the path. Audit scope patterns are the user's and the path is the site's, and a crawl asks
 * once per new URL, so the cost must not depend on how hostile either is.
 *
 * How: the pattern is cut at its `**`s into blocks, and each block at the `/`s of its literals
 * into segment globs (pieces separated by `*`, which never cross a `/`). The path is cut at its
 * `/`s into segments. A block is then a run of whole segments (its inner segment globs match
 * whole path segments) framed by a suffix of one segment and a prefix of another. Blocks are
 * placed left to right, each as early as it can end: after a `**` any later end only leaves less
 * room, so the earliest end is the best one (the same argument as robots.txt's left-to-right
 * matching of `*` pieces). Within a segment, pieces are found with `indexOf` / `lastIndexOf`
 * greedily (exact for `*` that matches any run of non-`/` characters: the segment holds none).
 *
 * Cost: a block of one segment glob is one `indexOf` walk over the path; a block spanning m
 * segments tries each path segment as its first, so at most (segments × m) segment checks. With
 * patterns of at most 200 characters and paths of at most 2,048 octets this stays in the tens of
 * microseconds for anything a pattern can say (tests/bench/scope_bench.ts measures it;
 * tests/audit_engine/scope.test.ts checks it against a position-set automaton on random input).
 *
 * @module
 */

/** A pattern as tokens: literal text, `*` (within a segment) or `**` (any run). */
export type GlobToken = { lit: string } | { star: 1 } | { globstar: 1 };

/** Pieces of a segment glob: `a*b*c` is ["a", "b", "c"]; a literal is one piece. */
type SegGlob = string[];
/** A block: the segment globs between two `**`, cut at the `/`s of its literals. */
type Block = SegGlob[];

/** A glob compiled for `matchGlob`. */
export interface CompiledGlob {
  blocks: Block[];
}

/** Compiles tokens (runs of `*` already told apart as `*` or `**`). */
export function compileTokens(tokens: GlobToken[]): CompiledGlob {
  const blocks: Block[] = [[[""]]];
  for (const t of tokens) {
    const block = blocks[blocks.length - 1];
    const seg = block[block.length - 1];
    if ("globstar" in t) blocks.push([[""]]);
    else if ("star" in t) seg.push("");
    else {
      const parts = t.lit.split("/");
      seg[seg.length - 1] += parts[0];
      for (const part of parts.slice(1)) block.push([part]);
    }
  }
  return { blocks };
}

/** The earliest end of `g` matched from exactly `from` in segment `s`, or -1. */
function prefixEnd(g: SegGlob, s: string, from: number): number {
  if (from < 0 || !s.startsWith(g[0], from)) return -1;
  let pos = from + g[0].length;
  for (let i = 1; i < g.length; i++) {
    const x = s.indexOf(g[i], pos);
    if (x < 0) return -1;
    pos = x + g[i].length;
  }
  return pos;
}

/** The latest start from which `g` matches the rest of segment `s` to its end, or -1. */
function suffixStart(g: SegGlob, s: string): number {
  const k = g.length - 1;
  if (!s.endsWith(g[k])) return -1;
  let pos = s.length - g[k].length;
  if (k === 0) return pos;
  for (let i = k - 1; i >= 0; i--) {
    const at = pos - g[i].length;
    if (at < 0) return -1;
    const x = s.lastIndexOf(g[i], at);
    if (x < 0) return -1;
    pos = x;
  }
  return pos;
}

/** Whether `g` matches all of segment `s` from `from`. */
function fullFrom(g: SegGlob, s: string, from: number): boolean {
  const k = g.length - 1;
  if (k === 0) return s.length - from === g[0].length && s.startsWith(g[0], from);
  const end = s.length - g[k].length;
  if (end < from + g[0].length || !s.startsWith(g[0], from) || !s.endsWith(g[k])) return false;
  let pos = from + g[0].length;
  for (let i = 1; i < k; i++) {
    const x = s.indexOf(g[i], pos);
    if (x < 0 || x + g[i].length > end) return false;
    pos = x + g[i].length;
  }
  return true;
}

/** A place in the path: segment index and offset within it. */
interface At {
  seg: number;
  off: number;
}

/** The block's inner segment globs match segments first+1 … first+m-1 whole. */
function innerMatch(b: Block, segs: readonly string[], first: number): boolean {
  for (let i = 1; i < b.length - 1; i++) if (!fullFrom(b[i], segs[first + i], 0)) return false;
  return true;
}

/** The first block, from the path's start: where it ends earliest, or null. */
function matchFromStart(b: Block, segs: readonly string[]): At | null {
  const m = b.length - 1;
  if (m === 0) {
    const e = prefixEnd(b[0], segs[0], 0);
    return e < 0 ? null : { seg: 0, off: e };
  }
  if (m >= segs.length || !fullFrom(b[0], segs[0], 0) || !innerMatch(b, segs, 0)) return null;
  const e = prefixEnd(b[m], segs[m], 0);
  return e < 0 ? null : { seg: m, off: e };
}

/** A block after a `**`, starting at or after `from`: where it ends earliest, or null. */
function findAfter(b: Block, segs: readonly string[], from: At): At | null {
  const m = b.length - 1;
  if (m === 0) {
    const g = b[0];
    for (let q = from.seg; q < segs.length; q++) {
      const s = segs[q];
      const start = s.indexOf(g[0], q === from.seg ? from.off : 0);
      if (start < 0) continue;
      // Later starts in this segment end no earlier (pieces are found left to right).
      const e = prefixEnd(g, s, start);
      if (e >= 0) return { seg: q, off: e };
    }
    return null;
  }
  for (let q = from.seg; q + m < segs.length; q++) {
    const st = suffixStart(b[0], segs[q]);
    if (st < 0 || (q === from.seg && st < from.off)) continue;
    if (!innerMatch(b, segs, q)) continue;
    const e = prefixEnd(b[m], segs[q + m], 0);
    if (e >= 0) return { seg: q + m, off: e };
  }
  return null;
}

/** The last block after a `**`: whether it ends the path, starting at or after `from`. */
function endsPath(b: Block, segs: readonly string[], from: At): boolean {
  const m = b.length - 1;
  const q = segs.length - 1 - m;
  if (q < from.seg) return false;
  const min = q === from.seg ? from.off : 0;
  if (m === 0) return suffixStart(b[0], segs[q]) >= min;
  const st = suffixStart(b[0], segs[q]);
  return st >= min && innerMatch(b, segs, q) && fullFrom(b[m], segs[segs.length - 1], 0);
}

/** Whether the compiled glob matches all of a path (octets), given cut at its `/`s. */
export function matchGlob(g: CompiledGlob, segs: readonly string[]): boolean {
  const { blocks } = g;
  const first = blocks[0];
  if (blocks.length === 1) {
    if (first.length !== segs.length) return false;
    return first.every((sg, i) => fullFrom(sg, segs[i], 0));
  }
  let at = matchFromStart(first, segs);
  for (let i = 1; at !== null && i < blocks.length - 1; i++) at = findAfter(blocks[i], segs, at);
  return at !== null && endsPath(blocks[blocks.length - 1], segs, at);
}
