import assert from "node:assert/strict";
import {
  fingerprintText,
  mayReach,
  similarity,
  SKETCH_WORDS,
  sketchInto,
} from "../../domain/audit_engine/text_fingerprint.ts";
import { extractPageFacts } from "../../domain/audit_engine/facts/extract.ts";

const fp = (s: string) => fingerprintText([s]);
const VOCAB = "river stone cloud harbour lantern meadow copper violin garden ladder".split(" ");
function text(seed: number, n: number): string {
  const out: string[] = [];
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push(VOCAB[x % VOCAB.length] + (x % 7));
  }
  return out.join(" ");
}

Deno.test("exact fingerprint: equal-length different text differs; whitespace and case do not", () => {
  assert.notEqual(fp("We visited Paris in May").exact, fp("We visited Pisas in May").exact);
  assert.equal(
    fp("Hello   world\n\tagain\u00a0and again").exact,
    fp(" hello world AGAIN and\u2003again ").exact,
  );
  assert.ok(Number.isSafeInteger(fp("x").exact));
});

Deno.test("word count is exact (no cap) and counts CJK characters one each", () => {
  assert.equal(fp(text(1, 1200)).words, 1200);
  assert.equal(fp("  one\u00a0two\u3000three  ").words, 3);
  // 20 Japanese characters with no spaces: 20 words, not one.
  assert.equal(fp("日本語のテキストは空白で単語を区切らない").words, 20);
  // chunks join without a separator, as the parser hands them over
  assert.equal(fingerprintText(["Par", "is is ", "nice"]).words, 3);
});

Deno.test("near-duplicate similarity: a few words changed stays high, other text stays low", () => {
  const a = text(7, 400);
  const words = a.split(" ");
  words[100] = "changed";
  words[300] = "edited";
  const b = words.join(" ") + " and one more line at the end";
  const c = text(99, 400);
  const sa = fp(a).sig;
  assert.ok(similarity(sa, fp(b).sig) >= 0.8, `near: ${similarity(sa, fp(b).sig)}`);
  assert.ok(similarity(sa, fp(c).sig) < 0.3, `unrelated: ${similarity(sa, fp(c).sig)}`);
  assert.equal(similarity(sa, fp(a).sig), 1);
});

Deno.test("fingerprints are the same across releases: stored ones are compared with new ones", () => {
  // An incremental re-audit compares a page's stored text hash and signature with a fresh one;
  // these figures are what earlier releases computed.
  const t = "Hello world, again and again: 日本語 text\u00a0here. " +
    Array.from({ length: 200 }, (_, i) => `word${i % 37} Other${i % 11}`).join(" ");
  const f = fp(t);
  let sig = 0;
  for (const b of f.sig) sig = (Math.imul(sig, 31) + b) >>> 0;
  assert.deepEqual([f.words, f.exact, sig], [410, 597787571480884, 1371587724]);
  assert.deepEqual([fp("").exact, fp("one").exact], [2271358496662398, 1841754485596266]);
});

Deno.test("similarity with a threshold: the same answer at or above it, below it otherwise", () => {
  // Signatures that differ in a chosen number of bins, some bins empty in one or both.
  let x = 17;
  const rand = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
  let near = 0;
  let turnedAway = 0;
  for (let pair = 0; pair < 5_000; pair++) {
    const a = new Uint16Array(64).map(() => rand() % 0xfffe);
    const b = a.slice();
    const differ = rand() % 30;
    for (let k = 0; k < differ; k++) b[rand() % 64] = rand() % 0xfffe;
    for (let k = rand() % 6; k > 0; k--) a[rand() % 64] = b[rand() % 64] = 0xffff;
    if (rand() % 4 === 0) a[rand() % 64] = 0xffff;
    const full = similarity(a, b);
    // Both sketches in one array, as the near-duplicate pass keeps them.
    const sketches = new Int32Array(2 * SKETCH_WORDS);
    sketchInto(a, sketches, 0);
    sketchInto(b, sketches, SKETCH_WORDS);
    for (const t of [0.5, 0.8, 0.9]) {
      const cut = similarity(a, b, t);
      if (full >= t) assert.equal(cut, full, `pair ${pair} at ${t}`);
      else assert.ok(cut < t, `pair ${pair} at ${t}: ${cut} for ${full}`);
      // The sketch never turns away a pair that could reach the threshold.
      if (!mayReach(sketches, 0, sketches, SKETCH_WORDS, t)) {
        assert.equal(cut, 0, `pair ${pair} at ${t}: turned away at ${full}`);
        turnedAway++;
      }
    }
    if (full >= 0.8) near++;
  }
  // The sketch's count at its extremes: all 64 bins differ in their low bits, or none does.
  const all = new Int32Array(2 * SKETCH_WORDS);
  sketchInto(new Uint16Array(64).fill(0x1230), all, 0);
  sketchInto(new Uint16Array(64).fill(0x123f), all, SKETCH_WORDS);
  assert.equal(mayReach(all, 0, all, SKETCH_WORDS, 0.01), false, "64 differing bins");
  assert.equal(mayReach(all, 0, all, SKETCH_WORDS, 0), true, "64 of 64 may differ at 0");
  assert.equal(mayReach(all, 0, all, 0, 1), true, "a sketch and itself");
  // Both sides of the threshold were exercised, and the sketch turned pairs away.
  assert.ok(near > 500 && near < 4_500, `near pairs ${near}`);
  assert.ok(turnedAway > 1_000, `turned away ${turnedAway}`);
});

Deno.test("page facts: visible text only, the whole page, scripts and styles excluded", () => {
  const url = new URL("https://s.test/");
  const long = text(3, 600);
  const f = extractPageFacts(
    `<html><head><title>t</title><style>p{}</style></head><body><p>${long}</p>` +
      `<script>var a = "not words";</script></body></html>`,
    url,
    "s.test",
  );
  assert.equal(f.wordCount, 600, "no 250-word cap");
  const g = extractPageFacts(`<p>${long.toUpperCase()}</p>`, url, "s.test");
  assert.equal(g.textHash, f.textHash);
});
