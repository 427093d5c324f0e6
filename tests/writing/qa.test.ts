import assert from "node:assert/strict";
import {
  ASSESSMENTS,
  feedbackFrom,
  QA_FAIL_CAP,
  QA_GENERIC_CAP,
  QA_LANGUAGE_CAP,
  QA_OUTLINE_CAP,
  scoreArticle,
} from "../../domain/writing/qa.ts";
import { repairDraft } from "../../domain/writing/repair.ts";
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
    generator: { kind: "model", model: "test" },
  };
  const r = scoreArticle(bad, brief());
  assert.ok(r.score <= 40, `score ${r.score}`);
  assert.equal(r.cappedAt, QA_OUTLINE_CAP); // under 300 words: the lowest cap in force
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

Deno.test("qa: internal links must be URLs the crawl fetched, scheme included", () => {
  const d = goodArticle();
  const withBad = { ...d, markdown: d.markdown + "\n\nRead [our story](/about-us).\n" };
  assert.equal(get(withBad, "internal_links_known").pass, false);
  const relative = { ...d, markdown: d.markdown + "\n\nRead [the guide](/guides/fit).\n" };
  assert.equal(get(relative, "internal_links_known").pass, true, "resolves to a crawled URL");
  for (const near of [`http://${HOST}/guides/fit`, `https://www.${HOST}/`, "/guides/fit/"]) {
    const md = d.markdown + `\n\nRead [the guide](${near}).\n`;
    assert.equal(get({ ...d, markdown: md }, "internal_links_known").pass, false, near);
    // The repair points a near miss at the URL the crawl fetched, so it passes afterwards.
    const repaired = repairDraft({ ...d, markdown: md }, brief());
    assert.equal(get(repaired, "internal_links_known").pass, true, near);
  }
  const fixed = repairDraft(
    { ...d, markdown: d.markdown + `\n\n[x](http://${HOST}/guides/fit)\n` },
    brief(),
  );
  assert.match(fixed.markdown, /\[x\]\(https:\/\/shoes\.example\/guides\/fit\)/);
  const external = { ...d, markdown: d.markdown + "\n\nSee [a study](https://other.example/x).\n" };
  assert.equal(get(external, "internal_links_known").pass, true);
});

Deno.test("qa: a site on http with a port: the https form of its home page is not a crawled URL", () => {
  const host = "127.0.0.1:8123";
  const b = brief({
    siteFacts: {
      host,
      origin: `http://${host}`,
      pages: [{ url: `http://${host}/`, title: "Home", h1: null, description: null }],
    },
  });
  const d = goodArticle();
  const https = { ...d, markdown: d.markdown + `\n\nSee [home](https://${host}/).\n` };
  assert.equal(get(https, "internal_links_known", b).pass, false);
  const repaired = repairDraft(https, b);
  assert.match(repaired.markdown, new RegExp(`\\[home\\]\\(http://${host}/\\)`));
  assert.equal(get(repaired, "internal_links_known", b).pass, true);
});

Deno.test("qa: repair leaves placeholders for QA to see; it never deletes them", () => {
  const d = goodArticle();
  const md = d.markdown.replace(
    "Fit matters more than brand, colour or price.",
    "A good pair costs [insert price]. Fit matters more than brand, colour or price.",
  );
  const repaired = repairDraft(
    { ...d, markdown: md, metaDescription: "From {{price}} a pair." },
    brief(),
  );
  assert.match(repaired.markdown, /costs \[insert price\]\./);
  assert.equal(repaired.metaDescription, "From {{price}} a pair.");
  const r = scoreArticle(repaired, brief());
  assert.equal(r.assessments.find((a) => a.id === "no_placeholders")!.pass, false);
  assert.ok(r.score <= QA_FAIL_CAP);
});

Deno.test("qa: text that would read the same for any topic is capped", () => {
  const generic = [
    "Start with the need and be clear about the problem before you look at solutions.",
    "Gather the facts you know and mark what you still need to find out.",
    "Compare a few options, because two or three real choices are enough to decide well.",
    "Decide and act by picking the option that fits best and setting a date to start.",
    "Look back after a while and adjust the plan if the result falls short.",
    "Keep notes as you work, since they make the next round faster.",
  ];
  const paragraphs = Array.from({ length: 8 }, (_, i) =>
    `Running shoes matter in part ${i + 1}. ` +
    generic.map((x) => x.replace(/\.$/, ` in round ${i + 1}.`)).join(" "));
  const md = "# Running shoes for beginners\n\n" +
    paragraphs.map((p, i) => `${i % 3 === 0 ? "## Running shoes notes\n\n" : ""}${p}`).join("\n\n");
  const r = scoreArticle({ ...goodArticle(), markdown: md }, brief());
  const spec = r.assessments.find((a) => a.id === "topic_specificity")!;
  assert.equal(spec.pass, false, spec.message);
  assert.match(spec.message, /read the same for any topic/);
  assert.ok(r.score <= QA_GENERIC_CAP, String(r.score));
  // The real article names its subject throughout.
  assert.equal(get(goodArticle(), "topic_specificity").score0to9, 9);
});

Deno.test("qa: the text must be in the project's language", () => {
  const en = goodArticle();
  for (const language of ["de", "ja", "fr", "ru"]) {
    const r = scoreArticle(en, brief({ language }));
    assert.equal(r.assessments.find((a) => a.id === "language_match")!.pass, false, language);
    assert.ok(r.score <= QA_LANGUAGE_CAP, `${language}: ${r.score}`);
  }
  assert.equal(get(en, "language_match").pass, true);
  const de: Draft = {
    ...en,
    metaDescription: "Laufschuhe für Anfänger: worauf es bei Passform und Dämpfung ankommt.",
    markdown: "# Laufschuhe für Anfänger\n\n" +
      "Wer mit dem Laufen beginnt, braucht vor allem einen Schuh, der gut sitzt. Die Ferse soll " +
      "nicht rutschen, und die Zehen brauchen Platz. Eine mittlere Dämpfung ist für die meisten " +
      "Anfänger die richtige Wahl, weil sie die Gelenke schont. Probieren Sie die Schuhe am " +
      "Nachmittag an, wenn die Füße etwas größer sind. Im Geschäft können Sie oft auf einem " +
      "Laufband testen, ob der Schuh auch in der Bewegung passt. Das ist mehr wert als jede " +
      "Werbung und auch mehr als ein hoher Preis.\n",
  };
  assert.equal(get(de, "language_match", brief({ language: "de-DE" })).pass, true);
  assert.equal(get(de, "language_match", brief({ language: "en" })).pass, false);
  const ja: Draft = {
    ...en,
    metaDescription: "初心者のためのランニングシューズの選び方。",
    markdown: "# ランニングシューズ\n\n初めてのランニングシューズは、足に合うことが一番大切です。" +
      "かかとが浮かず、つま先に少し余裕があるものを選びましょう。\n",
  };
  assert.equal(get(ja, "language_match", brief({ language: "ja" })).pass, true);
  assert.equal(get(ja, "language_match", brief({ language: "zh" })).pass, false);
  // A language without a profile still fails when the text clearly reads as another one...
  assert.equal(get(en, "language_match", brief({ language: "sw" })).score0to9, 0);
  // ...and too little text to tell is skipped (weighs nothing), not failed.
  const short: Draft = {
    ...en,
    metaDescription: "Shoes.",
    markdown: "# Shoes\n\nGood shoes fit.\n",
  };
  assert.equal(get(short, "language_match", brief({ language: "de" })).score0to9, null);
});

Deno.test("qa: keyphrase density bands", () => {
  const base = goodArticle();
  assert.equal(get(base, "keyphrase_density").score0to9, 9);
  assert.equal(
    get(base, "keyphrase_density", brief({ primaryKeyword: "hiking poles" })).score0to9,
    4,
  );
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
  const noFormula = scoreArticle(d, brief({ language: "sv" }));
  assert.equal(noFormula.assessments.find((a) => a.id === "reading_ease")!.score0to9, null);
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
