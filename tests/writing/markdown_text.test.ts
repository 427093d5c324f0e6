import assert from "node:assert/strict";
import {
  countWords,
  parseMarkdown,
  splitSentences,
  toPlain,
  words,
} from "../../domain/writing/markdown_text.ts";
import { longSentenceLimit, readingEase, syllables } from "../../domain/writing/readability.ts";
import { contentWords, occurrences, sameWord } from "../../domain/writing/keyphrase.ts";

Deno.test("markdown: blocks, notes, links and plain text", () => {
  const md = [
    "# Title",
    "",
    "> ✎ Fill this in.",
    "",
    'A **bold** [link](https://a.example/x "t") and `code`.',
    "Second line of the same paragraph.",
    "",
    "- item one",
    "2. item two",
    "",
    "> a real quote",
    "",
    "| a | b |",
    "|---|---|",
    "| c | d |",
    "",
    "```",
    "ignored words here",
    "```",
  ].join("\n");
  const { blocks, links } = parseMarkdown(md);
  assert.deepEqual(blocks.map((b) => b.kind), [
    "heading",
    "note",
    "paragraph",
    "list_item",
    "list_item",
    "quote",
    "table",
    "table",
    "code",
  ]);
  assert.equal(blocks[2].text, "A bold link and code. Second line of the same paragraph.");
  assert.deepEqual(links, [{ text: "link", url: "https://a.example/x" }]);
  assert.equal(countWords(md), 1 + 3 + 11 + 4 + 3 + 4); // code fences excluded
});

Deno.test("markdown: sentences and words", () => {
  assert.deepEqual(splitSentences("One two. Three four! Is it 5? Yes… done."), [
    "One two.",
    "Three four!",
    "Is it 5?",
    "Yes… done.",
  ]);
  // No break inside "2.5", nor before a lower-case word (abbreviations such as "e.g.").
  assert.deepEqual(splitSentences("Version 2.5 is out. It works, e.g. here."), [
    "Version 2.5 is out.",
    "It works, e.g. here.",
  ]);
  assert.deepEqual(words("Step-by-step, it's 100% über-cool"), [
    "Step-by-step",
    "it's",
    "100",
    "über-cool",
  ]);
  assert.equal(toPlain("_em_ and *em* and __strong__"), "em and em and strong");
});

Deno.test("readability: syllables, Flesch and limits", () => {
  assert.equal(syllables("cat", "en"), 1);
  assert.equal(syllables("table", "en"), 2);
  assert.equal(syllables("readability", "en"), 5);
  assert.equal(syllables("haus", "de"), 1);
  assert.equal(syllables("молоко", "ru"), 3);
  const easy = readingEase(2, words("The cat sat on the mat. The dog ran."), "en")!;
  assert.ok(easy.score > 90, String(easy.score));
  assert.equal(readingEase(1, ["x"], "ja"), null);
  assert.equal(longSentenceLimit("es"), 25);
  assert.equal(longSentenceLimit("ru"), 15);
  assert.equal(longSentenceLimit("en-GB"), 20);
});

Deno.test("keyphrase: content words, inflections, occurrences", () => {
  assert.deepEqual(contentWords("how to fix a leaky faucet", "en"), ["fix", "leaky", "faucet"]);
  assert.deepEqual(contentWords("the", "en"), ["the"]);
  assert.deepEqual(contentWords("東京 ラーメン", "ja"), ["東京", "ラーメン"]);
  assert.ok(sameWord("shoes", "shoe"));
  assert.ok(!sameWord("run", "runner"));
  assert.equal(
    occurrences(["running", "shoes", "and", "running", "shoe"], ["running", "shoes"]),
    2,
  );
});
