import assert from "node:assert/strict";
import {
  buildDraft,
  BUILTIN_GENERATOR,
  createBuiltinWriter,
} from "../../domain/writing/builtin_writer.ts";
import { QA_DRAFT_CAP, scoreArticle } from "../../domain/writing/qa.ts";
import { countWords, parseMarkdown } from "../../domain/writing/markdown_text.ts";
import { NOTE_MARKER, WriterError } from "../../domain/writing/writer.ts";
import { brief, HOST } from "./fixtures.ts";

const TOPICS: [string, string][] = [
  ["Running shoes for beginners", "running shoes"],
  ["How to choose running shoes", "how to choose running shoes"],
  ["What is pronation?", "what is pronation"],
  ["Best trail running shoes", "best trail running shoes"],
  ["Running shoe prices explained", "running shoe price"],
  ["SEO", "seo"],
];

Deno.test("builtin writer: same brief, byte-identical draft", async () => {
  const w = createBuiltinWriter();
  const a = await w.write(brief());
  const b = await w.write(brief());
  assert.deepEqual(a, b);
  assert.equal(a.generator, BUILTIN_GENERATOR);
});

Deno.test("builtin writer: honest structure, disclosure first, title verbatim", () => {
  const d = buildDraft(brief({ topic: "  Running shoes for beginners " }));
  assert.equal(d.title, "Running shoes for beginners");
  const blocks = parseMarkdown(d.markdown).blocks;
  assert.deepEqual(blocks[0], { kind: "heading", level: 1, text: "Running shoes for beginners" });
  assert.equal(blocks[1].kind, "note");
  assert.match(blocks[1].text, /without a language model/);
  assert.match(blocks[1].text, /complete it and check every statement/);
  const h2 = blocks.filter((b) => b.kind === "heading" && b.level === 2);
  const h3 = blocks.filter((b) => b.kind === "heading" && b.level === 3);
  assert.ok(h2.length >= 5);
  assert.ok(h3.length >= 3); // FAQ questions
  assert.ok(h2.some((h) => /frequently asked questions/.test(h.text)));
  assert.match(d.markdown, /United Kingdom/); // the project's country is respected
});

Deno.test("builtin writer: good QA score for every intent, capped as a draft", () => {
  for (const [topic, kw] of TOPICS) {
    const b = brief({ topic, primaryKeyword: kw });
    const d = buildDraft(b);
    const words = countWords(d.markdown);
    assert.ok(words >= 600 && words <= 1200, `${kw}: ${words} words`);
    const qa = scoreArticle(d, b);
    assert.ok(qa.score >= 70, `${kw}: ${qa.score}`);
    assert.ok(qa.score <= QA_DRAFT_CAP, `${kw}: a draft with gaps must not look finished`);
    const failedIntegrity = qa.assessments.filter((a) =>
      a.category === "integrity" && a.pass === false && a.id !== "draft_notes"
    );
    assert.deepEqual(failedIntegrity, [], kw);
    const meta = [...d.metaDescription].length;
    assert.ok(meta >= 120 && meta <= 156, `${kw}: meta ${meta} chars`);
  }
});

Deno.test("builtin writer: links only to crawled pages, quotes them, invents no figures", () => {
  const b = brief();
  const d = buildDraft(b);
  const links = parseMarkdown(d.markdown).links;
  const known = new Set(b.siteFacts.pages.map((p) => p.url));
  assert.ok(links.length >= 2);
  for (const l of links) assert.ok(known.has(l.url), l.url);
  // The fitting page's description is quoted verbatim and attributed by its link.
  assert.match(
    d.markdown,
    /\[How we fit running shoes\]\(https:\/\/shoes\.example\/guides\/fit\): “Our staff/,
  );
  // The only digits in the draft come from the crawled facts ("3 stores").
  const digits = d.markdown.replace(/https?:\/\/\S+/g, "").match(/\d+/g) ?? [];
  assert.deepEqual(digits, ["3"]);
  const numbers = scoreArticle(d, b).assessments.find((a) => a.id === "numbers_sourced")!;
  assert.equal(numbers.pass, true);
});

Deno.test("builtin writer: no crawled pages → home page link and a note, still honest", () => {
  const b = brief({ siteFacts: { host: HOST, pages: [] } });
  const d = buildDraft(b);
  assert.match(d.markdown, /\(https:\/\/shoes\.example\/\)/);
  assert.match(d.markdown, new RegExp(`> ${NOTE_MARKER} Link the pages of shoes\\.example`));
  const qa = scoreArticle(d, b);
  assert.ok(qa.score >= 70, String(qa.score));
});

Deno.test("builtin writer: the same description on every page is quoted once", () => {
  const pages = ["/", "/a", "/b"].map((p) => ({
    url: `https://${HOST}${p}`,
    title: `Page ${p}`,
    h1: null,
    description: "The same site-wide description about running shoes.",
  }));
  const b = brief({ siteFacts: { host: HOST, pages } });
  const d = buildDraft(b);
  assert.equal(d.markdown.split("The same site-wide description").length, 2);
  const dup = scoreArticle(d, b).assessments.find((a) => a.id === "no_duplicate_sentences")!;
  assert.equal(dup.pass, true);
});

Deno.test("builtin writer: a language without templates says so in the draft", () => {
  const b = brief({ language: "ja", country: "JP" });
  const d = buildDraft(b);
  assert.match(d.markdown, /no templates for "ja"/);
});

Deno.test("builtin writer: empty keyword is an invalid brief", () => {
  assert.throws(
    () => buildDraft(brief({ primaryKeyword: "  " })),
    (e) => e instanceof WriterError && e.code === "invalid_brief",
  );
});

Deno.test("builtin writer: revise returns a repaired, deterministic draft", async () => {
  const w = createBuiltinWriter();
  const b = brief();
  const d = await w.write(b);
  const r = await w.revise(b, d, [{ id: "draft_notes", message: "x" }]);
  assert.equal(r.title, d.title);
  assert.deepEqual(r, await w.revise(b, d, []));
});
