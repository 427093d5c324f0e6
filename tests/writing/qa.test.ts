import assert from "node:assert/strict";
import { ASSESSMENTS, feedbackFrom, QA_FAIL_CAP, scoreArticle } from "../../domain/writing/qa.ts";
import type { Draft } from "../../domain/writing/writer.ts";
import { brief, goodArticle, HOST } from "./fixtures.ts";

function get(draft: Draft, id: string, b = brief()) {
  const a = scoreArticle(draft, b).assessments.find((x) => x.id === id);
  assert.ok(a, id);
  return a;
}

Deno.test("qa: the assessment table has unique ids and positive weights", () => {
  const ids = ASSESSMENTS.map((a) => a.id);
  assert.equal(new Set(ids).size, ids.length);
  for (const a of ASSESSMENTS) assert.ok(a.weight > 0, a.id);
  assert.ok(ids.includes("keyphrase_density") && ids.includes("no_placeholders"));
});

Deno.test("qa: a finished, well-structured article scores high", () => {
  const r = scoreArticle(goodArticle(), brief());
  const failed = r.assessments.filter((a) => a.pass === false).map((a) => `${a.id}: ${a.message}`);
  assert.ok(r.score >= 90, `score ${r.score}; failed: ${failed.join(" | ")}`);
  assert.equal(r.cappedAt, null);
  assert.ok(r.wordCount >= 600, String(r.wordCount));
});

Deno.test("qa: a bad draft scores low", () => {
  const bad: Draft = {
    title: "Stuff",
    metaDescription: "",
    markdown: [
      "# Stuff",
      "# Another H1",
      "Lorem ipsum dolor sit amet. TODO write the intro.",
      "#### Deep heading",
      "Running shoes running shoes running shoes are running shoes and running shoes. " +
      "Running shoes running shoes running shoes are running shoes and running shoes.",
      "Buy them at [running shoes](https://shoes.example/made-up). {{CTA}}",
      "In 2023, 87% of runners bought 4,500 pairs.",
    ].join("\n\n"),
    generator: "test",
  };
  const r = scoreArticle(bad, brief());
  assert.ok(r.score <= 40, `score ${r.score}`);
  assert.equal(r.cappedAt, QA_FAIL_CAP);
  const fb = feedbackFrom(r).map((f) => f.id);
  for (
    const id of [
      "no_placeholders",
      "no_duplicate_sentences",
      "internal_links_known",
      "keyphrase_density",
      "keyphrase_anchor",
      "heading_structure",
      "text_length",
      "meta_description_length",
      "numbers_sourced",
    ]
  ) assert.ok(fb.includes(id), `${id} should fail; failed: ${fb.join(", ")}`);
});

Deno.test("qa: a placeholder alone caps an otherwise good article", () => {
  const d = goodArticle();
  for (const ph of ["[insert price here]", "{{brand}}", "TODO", "lorem ipsum"]) {
    const r = scoreArticle(
      { ...d, markdown: d.markdown + `\n\nSee ${ph} for details.\n` },
      brief(),
    );
    assert.equal(r.score, QA_FAIL_CAP, ph);
    assert.equal(r.assessments.find((a) => a.id === "no_placeholders")!.pass, false);
  }
});

Deno.test("qa: internal links must point at crawled pages; relative links count as internal", () => {
  const d = goodArticle();
  const withBad = { ...d, markdown: d.markdown + "\n\nRead [our story](/about-us).\n" };
  assert.equal(get(withBad, "internal_links_known").pass, false);
  const withGood = {
    ...d,
    markdown: d.markdown + `\n\nRead [the guide](/guides/fit/) and [home](http://www.${HOST}).\n`,
  };
  assert.equal(get(withGood, "internal_links_known").pass, true);
  const external = { ...d, markdown: d.markdown + "\n\nSee [a study](https://other.example/x).\n" };
  assert.equal(get(external, "internal_links_known").pass, true);
});

Deno.test("qa: keyphrase density bands", () => {
  const base = goodArticle();
  assert.equal(get(base, "keyphrase_density").score0to9, 9);
  const none = goodArticle("trainers");
  assert.equal(get(none, "keyphrase_density").score0to9, 4);
  const stuffed = {
    ...base,
    markdown: base.markdown + "\n\n" + "Running shoes matter. ".repeat(60),
  };
  assert.ok(get(stuffed, "keyphrase_density").score0to9! <= 1);
});

Deno.test("qa: keyphrase matching tolerates word order and plurals", () => {
  const d = goodArticle();
  const b = brief({ primaryKeyword: "running shoe" });
  assert.equal(get(d, "keyphrase_in_title", b).score0to9, 9);
  assert.equal(get(d, "keyphrase_in_introduction", b).score0to9, 9);
});

Deno.test("qa: reading ease uses the language's formula or is skipped and says so", () => {
  const d = goodArticle();
  const en = get(d, "reading_ease");
  assert.match(en.message, /^Flesch reading ease/);
  const de = get(d, "reading_ease", brief({ language: "de" }));
  assert.match(de.message, /Amstad/);
  const ja = get(d, "reading_ease", brief({ language: "ja" }));
  assert.equal(ja.score0to9, null);
  assert.equal(ja.pass, null);
  assert.match(ja.message, /Skipped/);
  // A skipped check weighs nothing rather than counting as a failure.
  assert.ok(scoreArticle(d, brief({ language: "ja" })).score >= 90);
});

Deno.test("qa: long sentences and long paragraphs are flagged", () => {
  const long = "Comprehensive organisational considerations necessitate extraordinarily " +
    "complicated documentation procedures, particularly regarding international regulatory " +
    "requirements, occupational responsibilities and administrative authorisation for every single department. ";
  const d: Draft = { ...goodArticle(), markdown: `# T\n\n${long.repeat(12)}\n` };
  assert.equal(get(d, "sentence_length").score0to9, 3);
  assert.equal(get(d, "paragraph_length").score0to9, 3);
  assert.equal(get(d, "reading_ease").pass, false);
});

Deno.test("qa: three sentences in a row with the same opening word", () => {
  const d: Draft = {
    ...goodArticle(),
    markdown: "# T\n\nThe shoe fits. The sole grips. The heel holds.\n",
  };
  assert.equal(get(d, "consecutive_sentences").score0to9, 3);
});

Deno.test("qa: unsourced figures are flagged, sourced ones are not", () => {
  const d = goodArticle();
  const sourced = { ...d, markdown: d.markdown + "\n\nWe have 3 stores.\n" };
  assert.equal(get(sourced, "numbers_sourced").score0to9, 9);
  const invented = { ...d, markdown: d.markdown + "\n\nPrices start at $79 and 95% agree.\n" };
  const a = get(invented, "numbers_sourced");
  assert.equal(a.score0to9, 6);
  assert.match(a.message, /\$79/);
});

Deno.test("qa: the same input gives the same result", () => {
  const a = scoreArticle(goodArticle(), brief());
  const b = scoreArticle(goodArticle(), brief());
  assert.deepEqual(a, b);
});
