import assert from "node:assert/strict";
import { fingerprintText, similarity } from "../../domain/audit_engine/text_fingerprint.ts";
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
