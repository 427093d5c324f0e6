import assert from "node:assert/strict";
import { buildDraft, createBuiltinWriter } from "../../domain/writing/builtin_writer.ts";
import {
  DEFAULT_QA_THRESHOLD,
  QA_LANGUAGE_CAP,
  QA_OUTLINE_CAP,
  scoreArticle,
} from "../../domain/writing/qa.ts";
import { parseMarkdown } from "../../domain/writing/markdown_text.ts";
import { type ArticleBrief, NOTE_MARKER, WriterError } from "../../domain/writing/writer.ts";
import { brief, HOST } from "./fixtures.ts";

const TOPICS: [string, string][] = [
  ["Running shoes for beginners", "running shoes"],
  ["How to choose running shoes", "how to choose running shoes"],
  ["What is pronation?", "what is pronation"],
  ["Best trail running shoes", "best trail running shoes"],
  ["Running shoe prices explained", "running shoe price"],
  ["SEO", "seo"],
];

/** The draft with every form of the keyword replaced by one token. */
function withoutKeyword(markdown: string, keyword: string): string {
  const k = keyword.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return markdown.replace(new RegExp(k, "gi"), "KEYWORD");
}

Deno.test("builtin writer: same brief, byte-identical draft, marked builtin_outline", async () => {
  const w = createBuiltinWriter();
  assert.equal(w.kind, "builtin_outline");
  const a = await w.write(brief());
  const b = await w.write(brief());
  assert.deepEqual(a, b);
  assert.deepEqual(a.generator, { kind: "builtin_outline" });
  assert.equal(a.usage, undefined);
});

Deno.test("builtin writer: an outline that says so first, title verbatim", () => {
  const d = buildDraft(brief({ topic: "  Running shoes for beginners " }));
  assert.equal(d.title, "Running shoes for beginners");
  const blocks = parseMarkdown(d.markdown).blocks;
  assert.deepEqual(blocks[0], { kind: "heading", level: 1, text: "Running shoes for beginners" });
  assert.equal(blocks[1].kind, "note");
  assert.match(blocks[1].text, /^✎ Outline, not an article: no language model is configured/);
  assert.match(d.markdown, /United Kingdom/); // the project's country is respected
  assert.match(d.markdown, /## Running shoes for beginners\n/); // the audience named in the topic
  assert.match(d.markdown, /- \*\*beginners\*\*: /); // the topic's own terms
});

Deno.test("builtin writer: never scored as nearly publishable; below the threshold for every intent", () => {
  for (const [topic, kw] of TOPICS) {
    const b = brief({ topic, primaryKeyword: kw });
    const qa = scoreArticle(buildDraft(b), b);
    assert.ok(qa.score <= QA_OUTLINE_CAP, `${kw}: ${qa.score}`);
    assert.ok(qa.score < DEFAULT_QA_THRESHOLD, kw);
    const length = qa.assessments.find((a) => a.id === "text_length")!;
    assert.equal(length.pass, false, kw);
    assert.match(length.message, /outline, not an article/);
  }
});

Deno.test("builtin writer: unrelated topics are not the same text with the keyword swapped", () => {
  const shoes = brief({ topic: "Running shoes for beginners", primaryKeyword: "running shoes" });
  const tax = brief({ topic: "Tax return for freelancers", primaryKeyword: "tax return" });
  const a = withoutKeyword(buildDraft(shoes).markdown, "running shoes");
  const b = withoutKeyword(buildDraft(tax).markdown, "tax return");
  assert.notEqual(a, b);
  // Not one stray word: a real share of the lines differs.
  const la = a.split("\n").filter((l) => l.trim());
  const lb = new Set(b.split("\n").filter((l) => l.trim()));
  const same = la.filter((l) => lb.has(l)).length;
  assert.ok(same / la.length < 0.75, `${same} of ${la.length} lines identical`);
  assert.match(b, /\*\*freelancers\*\*/);
  assert.match(b, /## KEYWORD for freelancers/);
});

Deno.test("builtin writer: links only URLs the crawl fetched, as fetched; invents no figures", () => {
  const b = brief();
  const d = buildDraft(b);
  const links = parseMarkdown(d.markdown).links;
  const known = new Set(b.siteFacts.pages.map((p) => p.url));
  assert.ok(links.length >= 2);
  for (const l of links) assert.ok(known.has(l.url), l.url);
  assert.match(
    d.markdown,
    /\[How we fit running shoes\]\(https:\/\/shoes\.example\/guides\/fit\): “Our staff/,
  );
  // The only digits: "3 stores" quoted from the crawl, and the count of 3 crawled pages.
  const digits = d.markdown.replace(/https?:\/\/\S+/g, "").match(/\d+/g) ?? [];
  assert.deepEqual(digits, ["3", "3"]);
  assert.match(d.markdown, /3 page\(s\) the crawl fetched/);
});

Deno.test("builtin writer: a site crawled over http with a port is linked over http, port kept", () => {
  const host = "127.0.0.1:8123";
  const b: ArticleBrief = brief({
    siteFacts: {
      host,
      origin: `http://${host}`,
      pages: [
        { url: `http://${host}/`, title: "Home", h1: null, description: null },
        { url: `http://${host}/shoes`, title: "Running shoes", h1: null, description: null },
      ],
    },
  });
  const d = buildDraft(b);
  const urls = parseMarkdown(d.markdown).links.map((l) => l.url).sort();
  assert.deepEqual(urls, [`http://${host}/`, `http://${host}/shoes`]);
  assert.doesNotMatch(d.markdown, /https:\/\/127\.0\.0\.1/);
  const known = scoreArticle(d, b).assessments.find((a) => a.id === "internal_links_known")!;
  assert.equal(known.pass, true, known.message);
});

Deno.test("builtin writer: no crawled pages → no link at all, and a note saying why", () => {
  const b = brief({ siteFacts: { host: HOST, pages: [] } });
  const d = buildDraft(b);
  assert.deepEqual(parseMarkdown(d.markdown).links, []);
  assert.match(d.markdown, new RegExp(`> ${NOTE_MARKER} The crawl has fetched no pages`));
  const internal = scoreArticle(d, b).assessments.find((a) => a.id === "internal_links")!;
  assert.equal(internal.score0to9, null, "skipped, not failed, before any crawl");
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
});

Deno.test("builtin writer: a de or ja project gets no English draft scored as fine", () => {
  for (const [language, country] of [["de", "DE"], ["ja", "JP"]]) {
    const b = brief({ language, country });
    const d = buildDraft(b);
    assert.match(d.markdown, new RegExp(`no wording for "${language}"`));
    const qa = scoreArticle(d, b);
    const lang = qa.assessments.find((a) => a.id === "language_match")!;
    assert.equal(lang.pass, false, language);
    assert.ok(qa.score <= QA_LANGUAGE_CAP, `${language}: ${qa.score}`);
  }
});

Deno.test("builtin writer: empty keyword is an invalid brief", () => {
  assert.throws(
    () => buildDraft(brief({ primaryKeyword: "  " })),
    (e) => e instanceof WriterError && e.code === "invalid_brief",
  );
});

Deno.test("builtin writer: a long outline is still an outline (300+ body words, capped at 40, says why)", () => {
  // The case: a long topic on a 5-page site, whose outline passed 300 body words and
  // scored 85 when only the word count capped outlines.
  const pages = ["", "audits", "crawling", "reports", "pricing"].map((p, i) => ({
    url: `https://agents.example/${p}`,
    title: `Technical SEO audits by AI agents, part ${i + 1}: ${p || "home"} explained`,
    h1: `AI agents and technical SEO audits: ${p || "home"}`,
    description: `How AI agents crawl a site, run technical SEO audits and report ${
      p || "findings"
    } for site owners who want clear fixes.`,
  }));
  const b = brief({
    topic: "How AI agents run technical SEO audits for large websites with many templates",
    primaryKeyword: "how AI agents run technical SEO audits",
    siteFacts: { host: "agents.example", pages },
  });
  const qa = scoreArticle(buildDraft(b), b);
  assert.ok(qa.wordCount >= 300, `${qa.wordCount} body words: long enough to pass the word cap`);
  assert.ok(qa.score <= QA_OUTLINE_CAP, String(qa.score));
  assert.equal(qa.cappedAt, QA_OUTLINE_CAP);
  const outline = qa.assessments.find((a) => a.id === "not_an_outline")!;
  assert.equal(outline.pass, false);
  assert.match(outline.message, /outline from the built-in writer/);
  assert.match(outline.message, /never scores above 40/);
  // Without the outline rule this text would score far above the cap: the cap is what holds.
  const raw = qa.assessments.filter((a) => a.score0to9 !== null && a.id !== "not_an_outline");
  const earned = raw.reduce((n, a) => n + a.weight * a.score0to9!, 0);
  const possible = raw.reduce((n, a) => n + a.weight * 9, 0);
  assert.ok(Math.round((earned / possible) * 100) > QA_OUTLINE_CAP);
});
