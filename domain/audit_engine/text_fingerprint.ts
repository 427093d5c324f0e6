/**
 * Fingerprints of a page's visible text, computed once per page at the end of the parse:
 * the exact word count, a 64-bit hash of the normalised word sequence (exact duplicates) and a
 * MinHash signature of its word 3-shingles (near-duplicates, by estimated Jaccard similarity).
 *
 * Normalised text = lower-cased words, split at whitespace (ASCII, no-break and the Unicode space
 * separators). Each Han, Hiragana or Katakana character counts as a word of its own (those
 * scripts do not separate words with spaces), so "Paris" and "Pisas" differ and "a  b" equals
 * "A b".
 *
 * Cost is what shaped this (the audit benchmark holds page checks to 1.5x a bare parse): the text
 * is joined and encoded to UTF-8 natively once and scanned as bytes (a JavaScript scan of the
 * string's characters costs about 3x more); each byte costs one multiply, each word a handful.
 * SHA-256 of a normalised copy measured about 20 % of a bare parse on its own, so the exact hash
 * is two independent 32-bit lanes over per-word FNV-1a hashes instead: 64 bits, accidental
 * collisions among 100,000 pages ~1e-9. The MinHash is "one permutation" (one hash per shingle,
 * 64 bins, keep each bin's minimum): one compare per word, and 16 bits of each minimum are kept
 * (b-bit MinHash), 128 bytes per page.
 *
 * @module
 */

export interface TextFingerprint {
  /** Visible words (CJK characters count one each). */
  words: number;
  /** 52 bits of the 64-bit hash of the normalised words, as a safe integer. */
  exact: number;
  /** MinHash signature: SIG_BINS low-16-bit bin minima; EMPTY_BIN where no shingle fell. */
  sig: Uint16Array;
}

export const SIG_BINS = 64;
/** An empty bin (pages under ~100 words leave some); never equal to a real minimum's bits. */
export const EMPTY_BIN = 0xffff;

const encoder = new TextEncoder();
/** Reused across pages up to this size; larger texts get a buffer of their own. */
const KEEP_BUFFER = 1 << 20;
let shared = new Uint8Array(64 * 1024);
// Hash state is kept as signed 32-bit integers (`| 0`: the same bits, since `^` and `Math.imul`
// read them as int32): a constant above 2^31 made V8 keep the loop's hashes as doubles, ~40%
// slower per byte.
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 16777619;
/** Bin minima for the page being fingerprinted (pages are done one at a time, synchronously). */
const MINS = new Int32Array(SIG_BINS);
const NO_MIN = 0x7fffffff;

/** Adds one shingle (the hashes of its three words) to the page's bin minima. */
function shingle(a: number, b: number, c: number): void {
  let s = Math.imul(a ^ Math.imul(b, 0x85ebca6b) ^ Math.imul(c, 0xc2b2ae35), 0x27d4eb2f);
  s ^= s >>> 15;
  const v = s & 0x3ffffff;
  if (v < MINS[s >>> 26]) MINS[s >>> 26] = v;
}

/** Fingerprints the visible text given as the parser's text chunks, in document order. */
export function fingerprintText(chunks: readonly string[]): TextFingerprint {
  let text = chunks.join("");
  let need = text.length * 3;
  let buf = need <= shared.length
    ? shared
    : need <= KEEP_BUFFER
    ? (shared = new Uint8Array(Math.max(need, shared.length * 2)))
    : new Uint8Array(need);
  let n = encoder.encodeInto(text, buf).written;
  if (n !== text.length) {
    // Non-ASCII present: let the runtime lower-case every script, then encode again.
    text = text.toLowerCase();
    need = text.length * 3;
    if (need > buf.length) buf = new Uint8Array(need);
    n = encoder.encodeInto(text, buf).written;
  }
  const mins = MINS;
  mins.fill(NO_MIN);
  let words = 0;
  let w = FNV_OFFSET;
  let inWord = false;
  let e1 = FNV_OFFSET;
  let e2 = 0x9e3779b9 | 0;
  let prev1 = 0;
  let prev2 = 0;
  // One turn per character. A word ends at a space, before a CJK character, or at the end.
  for (let i = 0; i <= n; i++) {
    let c = i < n ? buf[i] : 32;
    if (c > 32 && c < 0x80) {
      // ASCII word byte: the common case.
      if (c <= 90 && c >= 65) c |= 32;
      w = Math.imul(w ^ c, FNV_PRIME);
      inWord = true;
      continue;
    }
    let cjk = false;
    if (c >= 0x80) {
      const len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
      const c1 = buf[i + 1];
      const c2 = buf[i + 2];
      const space = (c === 0xc2 && c1 === 0xa0) || // U+00A0
        (c === 0xe2 && c1 === 0x80 && (c2 <= 0x8a || c2 === 0xa8 || c2 === 0xa9 || c2 === 0xaf)) ||
        (c === 0xe2 && c1 === 0x81 && c2 === 0x9f) || (c === 0xe3 && c1 === 0x80 && c2 === 0x80);
      cjk = !space && ((c === 0xe3 && c1 >= 0x81 && c1 <= 0x83) || (c >= 0xe4 && c <= 0xe9));
      if (!space && !cjk) {
        for (let k = 0; k < len; k++) w = Math.imul(w ^ buf[i + k], FNV_PRIME);
        inWord = true;
        i += len - 1;
        continue;
      }
      if (cjk) {
        // Close the open word; the character itself becomes the next word, closed below.
        if (inWord) {
          words++;
          e1 = Math.imul(e1 ^ w, FNV_PRIME);
          e2 = Math.imul(((e2 << 7) | (e2 >>> 25)) ^ w, 0x85ebca6b);
          if (words >= 3) shingle(prev2, prev1, w);
          prev2 = prev1;
          prev1 = w;
        }
        w = FNV_OFFSET;
        for (let k = 0; k < 3; k++) w = Math.imul(w ^ buf[i + k], FNV_PRIME);
        inWord = true;
      }
      i += len - 1;
    }
    if (!inWord) continue;
    // End of a word.
    words++;
    e1 = Math.imul(e1 ^ w, FNV_PRIME);
    e2 = Math.imul(((e2 << 7) | (e2 >>> 25)) ^ w, 0x85ebca6b);
    if (words >= 3) {
      let s = Math.imul(
        prev2 ^ Math.imul(prev1, 0x85ebca6b) ^ Math.imul(w, 0xc2b2ae35),
        0x27d4eb2f,
      );
      s ^= s >>> 15;
      // Top 6 bits choose the bin, the other 26 are the value whose minimum the bin keeps.
      const v = s & 0x3ffffff;
      if (v < mins[s >>> 26]) mins[s >>> 26] = v;
    }
    prev2 = prev1;
    prev1 = w;
    w = FNV_OFFSET;
    inWord = false;
  }
  const sig = new Uint16Array(SIG_BINS);
  for (let b = 0; b < SIG_BINS; b++) {
    const m = mins[b];
    // 0xffff is reserved for empty bins; a real minimum with those bits becomes 0xfffe.
    sig[b] = m === NO_MIN ? EMPTY_BIN : Math.min(m & 0xffff, 0xfffe);
  }
  e2 ^= e2 >>> 16;
  const exact = (e1 >>> 0) * 2 ** 20 + ((e2 >>> 12) & 0xfffff);
  return { words, exact, sig };
}

/**
 * Estimated Jaccard similarity of two pages' shingle sets from their signatures: the share of
 * bins, among those filled in either, whose minima agree. Given `atLeast`, a pair that cannot
 * reach it answers 0 as soon as too many bins differ: the near-duplicate pass compares each page
 * with up to 200 others per band, and on a templated site most pairs share a band but not the
 * text, so they are told apart after ~13 bins instead of 64.
 *
 * @example
 * ```ts
 * const a = fingerprintText(["the same words on both pages"]).sig;
 * console.log(similarity(a, a), similarity(a, a, 0.8)); // 1 1
 * ```
 */
export function similarity(a: Uint16Array, b: Uint16Array, atLeast = 0): number {
  // Differing bins past which `same / used` < atLeast whatever the other bins hold (used <= 64).
  const maxDiffer = (1 - atLeast) * SIG_BINS;
  let same = 0;
  let used = 0;
  for (let k = 0; k < SIG_BINS; k++) {
    const x = a[k];
    const y = b[k];
    if (x === EMPTY_BIN && y === EMPTY_BIN) continue;
    used++;
    if (x === y) same++;
    else if (used - same > maxDiffer) return 0;
  }
  return used === 0 ? 0 : same / used;
}

/** Words of a signature's sketch (`sketchInto`): the low 4 bits of each of its SIG_BINS bins. */
export const SKETCH_WORDS = SIG_BINS / 8;

/**
 * Writes a signature's sketch, for `mayReach`, at word `at` of `out`: the low 4 bits of each
 * bin, 8 bins to a 32-bit word. Sketches are kept side by side in one array rather than one
 * small typed array each (the near-duplicate pass takes one per page and band).
 *
 * @example
 * ```ts
 * const out = new Int32Array(2 * SKETCH_WORDS);
 * sketchInto(fingerprintText(["words on a page"]).sig, out, SKETCH_WORDS);
 * ```
 */
export function sketchInto(sig: Uint16Array, out: Int32Array, at: number): void {
  for (let w = 0; w < SKETCH_WORDS; w++) {
    let x = 0;
    for (let k = 0; k < 8; k++) x |= (sig[w * 8 + k] & 15) << (k << 2);
    out[at + w] = x;
  }
}

/**
 * Whether two signatures, given as their sketches (`sketchInto`, at word `ai` of `a` and `bi` of
 * `b`), may reach `atLeast`: false means `similarity(a, b, atLeast)` is 0. Bins whose low bits
 * differ differ, so their count is a lower bound of the differing bins (4 bits tell ~94% of
 * differing bins apart), which decide the answer. It reads 8 words where `similarity` walks up
 * to 64 bins: on a templated site most pairs that share a band share much less than 80% of
 * their text, and the near-duplicate pass compared each page with 200 others in each of 16
 * bands (a tenth of a crawl's CPU on the crawl bench's site, about a twentieth with this first).
 *
 * @example
 * ```ts
 * const s = new Int32Array(SKETCH_WORDS);
 * sketchInto(fingerprintText(["one text of several words here"]).sig, s, 0);
 * mayReach(s, 0, s, 0, 0.8); // true
 * ```
 */
export function mayReach(
  a: Int32Array,
  ai: number,
  b: Int32Array,
  bi: number,
  atLeast: number,
): boolean {
  // Per word, one bit per bin (the low bit of its nibble) where any of its 4 bits differs;
  // summed nibble-wise over the 8 words (at most 8 a nibble: no carry), then added up. The sum
  // is kept in int32 (`| 0`: the same 32 bits), where past 2^31 it became a double.
  let sum = 0;
  for (let w = 0; w < SKETCH_WORDS; w++) {
    const z = a[ai + w] ^ b[bi + w];
    sum = (sum + ((z | (z >>> 1) | (z >>> 2) | (z >>> 3)) & 0x11111111)) | 0;
  }
  sum = (sum & 0x0f0f0f0f) + ((sum >>> 4) & 0x0f0f0f0f);
  const differ = Math.imul(sum, 0x01010101) >>> 24;
  return differ <= (1 - atLeast) * SIG_BINS;
}
