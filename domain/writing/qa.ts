/**
 * Content QA: a fixed table of assessments, each scored 0–9 in the spirit of Yoast's traffic
 * lights, combined into one weighted `qa_score` 0–100.
 *
 * Why reimplement rather than run `yoastseo`: it is GPL-3.0, wants HTML, and costs ~0.25 s per
 * pass; these checks are simple counts, documented in docs/writing.md, and take well under a
 * millisecond. Integrity checks (placeholders, repeated sentences, links to pages the crawl never
 * saw) cap the total, so keyword placement cannot make a broken draft look finished.
 */

import type { Category, QaReport } from "./types.ts";
import type { ArticleBrief, Draft, QaFeedback } from "./writer.ts";
import {
  type Block,
  type Link,
  lowerWords,
  parseMarkdown,
  splitSentences,
} from "./markdown_text.ts";
import {
  contentWords,
  fullMatch,
  matchedCount,
  normalisePhrase,
  occurrences,
  sameStem,
} from "./keyphrase.ts";
import { hasReadingEase, longSentenceLimit, primary, readingEase } from "./readability.ts";
import { compareLanguage } from "./language.ts";
import { crawledIndex, isInternal, linkCandidates } from "./site_links.ts";

/** A draft at or above this score passes QA (the job's default threshold). */
export const DEFAULT_QA_THRESHOLD = 70;
/** The total never exceeds this while an integrity assessment with a cap fails. */
export const QA_FAIL_CAP = 60;
/** A draft with open editor's notes is not finished, so it never scores above this. */
export const QA_DRAFT_CAP = 85;
/**
 * Under 300 body words a text is an outline or a stub, not an article a reader can use; and text
 * from the built-in outline writer is an outline whatever its length (`not_an_outline`).
 */
export const QA_OUTLINE_CAP = 40;
/** Text that would read the same for any topic (boilerplate) never scores above this. */
export const QA_GENERIC_CAP = 45;
/** Text in another language than the project's is of no use to its readers. */
export const QA_LANGUAGE_CAP = 20;
/** An assessment passes at or above this 0–9 score (Yoast's "good" starts at 8, "ok" at 5). */
export const PASS_AT = 7;

export type { Category };

export interface AssessmentResult {
  id: string;
  category: Category;
  weight: number;
  /** 0–9, or null when the assessment does not apply (skipped; it then weighs nothing). */
  score0to9: number | null;
  /** `score0to9 >= PASS_AT`; null when skipped. */
  pass: boolean | null;
  message: string;
}

export interface QaResult {
  /** 0–100, the same for the same input every time. */
  score: number;
  /** The cap in force because an assessment with a `capAt` failed, or null. */
  cappedAt: number | null;
  /** Words of the article body analysed (title, meta and editor's notes excluded). */
  wordCount: number;
  assessments: AssessmentResult[];
}

/** `cap`: while this outcome stands, the total cannot exceed it (for caps that depend on the score). */
type Outcome = { score: number | null; message: string; cap?: number };

interface AssessmentDef {
  id: string;
  category: Category;
  weight: number;
  /** While it fails, the total cannot exceed this. */
  capAt?: number;
  run(ctx: QaContext): Outcome;
}

/** Everything the assessments read, computed once per draft. */
interface QaContext {
  brief: ArticleBrief;
  draft: Draft;
  language: string;
  kw: string[];
  kwPhrase: string;
  /** Body blocks without editor's notes and code. */
  body: Block[];
  notes: Block[];
  headings: Block[];
  subheadings: Block[];
  /** Sentences of paragraphs, list items and tables, in order, with lower-cased words. */
  sentences: { text: string; words: string[]; blockIndex: number; kind: Block["kind"] }[];
  bodyWords: string[];
  links: Link[];
  fullMarkdown: string;
}

const s = (score: number | null, message: string, cap?: number): Outcome =>
  cap === undefined ? { score, message } : { score, message, cap };

/**
 * THE assessment table: ids, weights and rules in one place. Weights sum to 62: SEO 27,
 * readability 11, integrity 24 (`not_an_outline`'s 4 only count for the built-in writer's
 * outlines: it is skipped for a model's draft). Thresholds are documented in docs/writing.md.
 */
export const ASSESSMENTS: readonly AssessmentDef[] = [
  // ---- SEO -------------------------------------------------------------------------------
  { id: "keyphrase_in_title", category: "seo", weight: 3, run: keyphraseInTitle },
  { id: "keyphrase_in_introduction", category: "seo", weight: 3, run: keyphraseInIntro },
  { id: "keyphrase_in_meta_description", category: "seo", weight: 2, run: keyphraseInMeta },
  { id: "keyphrase_in_subheadings", category: "seo", weight: 2, run: keyphraseInSubheadings },
  { id: "keyphrase_density", category: "seo", weight: 3, run: keyphraseDensity },
  { id: "keyphrase_length", category: "seo", weight: 1, run: keyphraseLength },
  { id: "title_length", category: "seo", weight: 2, run: titleLength },
  { id: "meta_description_length", category: "seo", weight: 2, run: metaLength },
  { id: "text_length", category: "seo", weight: 3, run: textLength },
  { id: "heading_structure", category: "seo", weight: 2, run: headingStructure },
  { id: "internal_links", category: "seo", weight: 3, run: internalLinks },
  { id: "keyphrase_anchor", category: "seo", weight: 1, run: keyphraseAnchor },
  // ---- readability -----------------------------------------------------------------------
  { id: "reading_ease", category: "readability", weight: 3, run: readingEaseCheck },
  { id: "sentence_length", category: "readability", weight: 3, run: sentenceLength },
  { id: "paragraph_length", category: "readability", weight: 2, run: paragraphLength },
  { id: "subheading_distribution", category: "readability", weight: 2, run: subheadingDist },
  { id: "consecutive_sentences", category: "readability", weight: 1, run: consecutive },
  // ---- integrity -------------------------------------------------------------------------
  { id: "language_match", category: "integrity", weight: 3, run: languageMatch },
  { id: "topic_specificity", category: "integrity", weight: 3, run: topicSpecificity },
  {
    id: "no_placeholders",
    category: "integrity",
    weight: 4,
    capAt: QA_FAIL_CAP,
    run: placeholders,
  },
  {
    id: "no_duplicate_sentences",
    category: "integrity",
    weight: 3,
    capAt: QA_FAIL_CAP,
    run: duplicates,
  },
  {
    id: "internal_links_known",
    category: "integrity",
    weight: 3,
    capAt: QA_FAIL_CAP,
    run: linksKnown,
  },
  { id: "numbers_sourced", category: "integrity", weight: 2, run: numbersSourced },
  {
    id: "not_an_outline",
    category: "integrity",
    weight: 4,
    capAt: QA_OUTLINE_CAP,
    run: notAnOutline,
  },
  { id: "draft_notes", category: "integrity", weight: 2, capAt: QA_DRAFT_CAP, run: draftNotes },
];

/** Scores a draft against the brief. Pure and deterministic. */
export function scoreArticle(draft: Draft, brief: ArticleBrief): QaResult {
  const ctx = buildContext(draft, brief);
  let earned = 0;
  let possible = 0;
  let cap = 100;
  const assessments: AssessmentResult[] = [];
  for (const def of ASSESSMENTS) {
    const { score, message, cap: outcomeCap } = def.run(ctx);
    const clamped = score === null ? null : Math.max(0, Math.min(9, score));
    const pass = clamped === null ? null : clamped >= PASS_AT;
    if (clamped !== null) {
      earned += def.weight * clamped;
      possible += def.weight * 9;
      if (def.capAt !== undefined && !pass) cap = Math.min(cap, def.capAt);
    }
    if (outcomeCap !== undefined) cap = Math.min(cap, outcomeCap);
    assessments.push({
      id: def.id,
      category: def.category,
      weight: def.weight,
      score0to9: clamped,
      pass,
      message,
    });
  }
  const raw = possible ? Math.round((earned / possible) * 100) : 0;
  const score = Math.min(raw, cap);
  const cappedAt = cap < 100 ? cap : null;
  return { score, cappedAt, wordCount: ctx.bodyWords.length, assessments };
}

export type { QaReport };

/** The stored and shown form of a QA result (messages clipped, so the record stays small). */
export function qaReport(r: QaResult): QaReport {
  return {
    capped_at: r.cappedAt,
    assessments: r.assessments.map((a) => ({
      id: a.id,
      category: a.category,
      score: a.score0to9,
      pass: a.pass,
      message: a.message.slice(0, 400),
    })),
  };
}

/** The failed assessments, worst weighted loss first: the revision pass's to-do list. */
export function feedbackFrom(result: QaResult): QaFeedback[] {
  return result.assessments
    .filter((a) => a.pass === false)
    .sort((a, b) => b.weight * (9 - b.score0to9!) - a.weight * (9 - a.score0to9!))
    .map((a) => ({ id: a.id, message: a.message }));
}

function buildContext(draft: Draft, brief: ArticleBrief): QaContext {
  const parsed = parseMarkdown(draft.markdown);
  const body: Block[] = [];
  const notes: Block[] = [];
  for (const b of parsed.blocks) {
    if (b.kind === "note") notes.push(b);
    else if (b.kind !== "code") body.push(b);
  }
  const headings = body.filter((b) => b.kind === "heading");
  const sentences: QaContext["sentences"] = [];
  const bodyWords: string[] = [];
  body.forEach((b, i) => {
    if (b.kind === "heading") {
      if (b.level > 1) bodyWords.push(...lowerWords(b.text));
      return;
    }
    for (const text of splitSentences(b.text)) {
      const w = lowerWords(text);
      if (!w.length) continue;
      sentences.push({ text, words: w, blockIndex: i, kind: b.kind });
      bodyWords.push(...w);
    }
  });
  return {
    brief,
    draft,
    language: primary(brief.language),
    kw: contentWords(brief.primaryKeyword, brief.language),
    kwPhrase: normalisePhrase(brief.primaryKeyword),
    body,
    notes,
    headings,
    subheadings: headings.filter((h) => h.level === 2 || h.level === 3),
    sentences,
    bodyWords,
    links: parsed.links,
    fullMarkdown: `${draft.title}\n${draft.metaDescription}\n${draft.markdown}`,
  };
}

// ---- SEO assessments ---------------------------------------------------------------------

function keyphraseInTitle(c: QaContext): Outcome {
  const title = normalisePhrase(c.draft.title);
  if (!title) return s(0, "The title is empty.");
  if (title.startsWith(c.kwPhrase)) return s(9, "The title starts with the exact keyphrase.");
  if (` ${title} `.includes(` ${c.kwPhrase} `)) {
    return s(8, "The title contains the exact keyphrase (starting with it would be stronger).");
  }
  if (fullMatch(lowerWords(c.draft.title), c.kw)) {
    return s(6, "The title has all keyphrase words, but not as the exact phrase.");
  }
  return s(2, "The title misses words of the keyphrase.");
}

function keyphraseInIntro(c: QaContext): Outcome {
  const idx = c.body.findIndex((b) => b.kind === "paragraph");
  if (idx < 0) return s(3, "There is no introduction paragraph.");
  const own = c.sentences.filter((x) => x.blockIndex === idx);
  if (own.some((x) => fullMatch(x.words, c.kw))) {
    return s(9, "The keyphrase appears in the first paragraph.");
  }
  if (fullMatch(own.flatMap((x) => x.words), c.kw)) {
    return s(6, "The first paragraph has the keyphrase words, but not in one sentence.");
  }
  return s(3, "The first paragraph does not mention the keyphrase.");
}

function keyphraseInMeta(c: QaContext): Outcome {
  const meta = c.draft.metaDescription.trim();
  if (!meta) return s(1, "There is no meta description.");
  const hits = splitSentences(meta).filter((x) => fullMatch(lowerWords(x), c.kw)).length;
  if (hits >= 1 && hits <= 2) return s(9, "The meta description mentions the keyphrase.");
  if (hits > 2) return s(3, "The meta description repeats the keyphrase in more than 2 sentences.");
  return s(3, "The meta description does not mention the keyphrase.");
}

function keyphraseInSubheadings(c: QaContext): Outcome {
  const n = c.subheadings.length;
  if (!n) return s(2, "There are no H2/H3 subheadings.");
  const need = Math.ceil(c.kw.length / 2);
  const hits = c.subheadings.filter((h) => matchedCount(lowerWords(h.text), c.kw) >= need).length;
  const share = hits / n;
  const pct = Math.round(share * 100);
  if (share >= 0.3 && share <= 0.75) {
    return s(9, `${hits} of ${n} subheadings (${pct}%) reflect the keyphrase (30–75% wanted).`);
  }
  if (hits === 0) return s(3, "No H2/H3 subheading reflects the keyphrase (30–75% wanted).");
  return s(
    5,
    `${hits} of ${n} subheadings (${pct}%) reflect the keyphrase; 30–75% is the healthy range.`,
  );
}

function keyphraseDensity(c: QaContext): Outcome {
  const n = c.bodyWords.length;
  if (!n) return s(0, "There is no body text.");
  let hits = 0;
  for (const x of c.sentences) hits += occurrences(x.words, c.kw);
  const pct = (hits / n) * 100;
  const shown = `${hits} occurrences in ${n} words (${pct.toFixed(2)}%)`;
  if (hits === 0) return s(4, "The keyphrase does not occur in the body text.");
  if (pct < 0.5) return s(4, `Keyphrase density is low: ${shown}; aim for 0.5–3%.`);
  if (pct <= 3) return s(9, `Keyphrase density is good: ${shown}.`);
  if (pct <= 4) return s(1, `Keyphrase density is high: ${shown}; keep it under 3%.`);
  return s(0, `The keyphrase is stuffed: ${shown}; keep it under 3%.`);
}

function keyphraseLength(c: QaContext): Outcome {
  const n = c.kw.length;
  const hasList = ["en", "de", "fr", "es", "it", "nl", "pt"].includes(c.language);
  const [good, ok] = hasList ? [4, 8] : [6, 9];
  if (n === 0) return s(0, "The keyphrase has no words.");
  if (n <= good) return s(9, `The keyphrase has ${n} content word(s).`);
  if (n <= ok) return s(6, `The keyphrase has ${n} content words; ${good} or fewer match better.`);
  return s(3, `The keyphrase has ${n} content words; it is too long to place naturally.`);
}

function titleLength(c: QaContext): Outcome {
  const n = [...c.draft.title.trim()].length;
  if (!n) return s(0, "The title is empty.");
  if (n >= 15 && n <= 60) return s(9, `The title has ${n} characters (15–60 wanted).`);
  if ((n >= 10 && n < 15) || (n > 60 && n <= 70)) {
    return s(6, `The title has ${n} characters; 15–60 shows in full in search results.`);
  }
  return s(3, `The title has ${n} characters; 15–60 shows in full in search results.`);
}

function metaLength(c: QaContext): Outcome {
  const n = [...c.draft.metaDescription.trim()].length;
  if (!n) return s(0, "There is no meta description.");
  if (n >= 120 && n <= 156) return s(9, `The meta description has ${n} characters (120–156).`);
  if ((n >= 80 && n < 120) || (n > 156 && n <= 170)) {
    return s(6, `The meta description has ${n} characters; 120–156 is the target.`);
  }
  return s(3, `The meta description has ${n} characters; 120–156 is the target.`);
}

function textLength(c: QaContext): Outcome {
  const n = c.bodyWords.length;
  if (n >= 600) return s(9, `The body has ${n} words (600 or more wanted).`);
  if (n >= 300) return s(6, `The body has ${n} words; 600 or more covers a topic properly.`);
  const stub =
    `; under 300 words this is an outline, not an article (score capped at ${QA_OUTLINE_CAP})`;
  if (n >= 200) return s(3, `The body has only ${n} words${stub}.`, QA_OUTLINE_CAP);
  return s(0, `The body has only ${n} words${stub}.`, QA_OUTLINE_CAP);
}

function headingStructure(c: QaContext): Outcome {
  const problems: string[] = [];
  const h1 = c.headings.filter((h) => h.level === 1).length;
  if (h1 > 1) problems.push(`${h1} H1 headings (one wanted)`);
  const h2 = c.headings.filter((h) => h.level === 2).length;
  if (h2 < 2 && c.bodyWords.length >= 300) problems.push(`${h2} H2 headings (2 or more wanted)`);
  let prev = 1;
  for (const h of c.headings) {
    if (h.level > prev + 1) {
      problems.push(`a jump from H${prev} to H${h.level} ("${h.text}")`);
      break;
    }
    prev = h.level;
  }
  if (c.headings.some((h) => !h.text.trim())) problems.push("an empty heading");
  if (!problems.length) return s(9, `The heading outline is sound (${h2} H2 sections).`);
  return s(problems.length === 1 ? 5 : 2, `Heading problems: ${problems.join("; ")}.`);
}

function internalLinks(c: QaContext): Outcome {
  if (!c.brief.siteFacts.pages.length) {
    return s(null, "Skipped: the crawl has fetched no page of the site yet (run an audit).");
  }
  const n = c.links.filter((l) => isInternal(l.url, c.brief.siteFacts)).length;
  if (n >= 2) return s(9, `${n} internal links to the site's own pages.`);
  if (n === 1) return s(7, "One internal link; two or more help readers and crawlers.");
  return s(3, "No internal links to the site's own pages.");
}

function keyphraseAnchor(c: QaContext): Outcome {
  const bad = c.links.filter((l) => normalisePhrase(l.text) === c.kwPhrase).length;
  if (bad) return s(2, `${bad} link(s) use the exact keyphrase as anchor text; that competes.`);
  return s(9, "No link uses the exact keyphrase as its anchor text.");
}

// ---- readability assessments -------------------------------------------------------------

function readingEaseCheck(c: QaContext): Outcome {
  if (!hasReadingEase(c.language)) {
    return s(null, `Skipped: no published reading-ease formula is built in for "${c.language}".`);
  }
  const textSentences = c.sentences.filter((x) => x.kind !== "table");
  const r = readingEase(textSentences.length, textSentences.flatMap((x) => x.words), c.language);
  if (!r) return s(null, "Skipped: there is no body text to measure.");
  const msg = `${r.formula} ${r.score}`;
  if (r.score >= r.good) return s(9, `${msg}: easy enough to read (${r.good}+ wanted).`);
  if (r.score >= r.poor) return s(6, `${msg}: fairly difficult; aim for ${r.good}+.`);
  return s(3, `${msg}: difficult to read; use shorter sentences and words (${r.good}+ wanted).`);
}

function sentenceLength(c: QaContext): Outcome {
  const xs = c.sentences.filter((x) => x.kind !== "table");
  if (!xs.length) return s(0, "There are no sentences.");
  const limit = longSentenceLimit(c.language);
  const long = xs.filter((x) => x.words.length > limit).length;
  const pct = Math.round((long / xs.length) * 100);
  const msg = `${pct}% of sentences have more than ${limit} words`;
  if (pct <= 25) return s(9, `${msg} (25% or less wanted).`);
  if (pct <= 30) return s(6, `${msg}; shorten some (25% or less wanted).`);
  return s(3, `${msg}; shorten them (25% or less wanted).`);
}

function paragraphLength(c: QaContext): Outcome {
  let max = 0;
  for (const b of c.body) {
    if (b.kind === "paragraph") max = Math.max(max, lowerWords(b.text).length);
  }
  if (max <= 150) return s(9, `The longest paragraph has ${max} words (150 or fewer wanted).`);
  if (max <= 200) return s(6, `The longest paragraph has ${max} words; split it (150 max).`);
  return s(3, `The longest paragraph has ${max} words; split it (150 max).`);
}

function subheadingDist(c: QaContext): Outcome {
  const sections: number[] = [0];
  for (const b of c.body) {
    if (b.kind === "heading" && (b.level === 2 || b.level === 3)) sections.push(0);
    else if (b.kind !== "heading") sections[sections.length - 1] += lowerWords(b.text).length;
  }
  if (sections.length === 1 && c.bodyWords.length > 300) {
    return s(2, "A text over 300 words needs subheadings.");
  }
  const max = Math.max(...sections);
  if (max <= 300) return s(9, `The longest stretch without a subheading has ${max} words.`);
  if (max <= 350) return s(6, `A stretch of ${max} words has no subheading; break it up.`);
  return s(3, `A stretch of ${max} words has no subheading; break it up (300 max).`);
}

function consecutive(c: QaContext): Outcome {
  let run = 1;
  let worst = 1;
  let word = "";
  let prevBlock = -2;
  for (const x of c.sentences) {
    const first = x.words[0];
    const adjacent = x.kind === "paragraph" && x.blockIndex <= prevBlock + 1;
    run = adjacent && first === word ? run + 1 : 1;
    worst = Math.max(worst, run);
    word = first;
    prevBlock = x.kind === "paragraph" ? x.blockIndex : -2;
  }
  if (worst >= 3) return s(3, `${worst} sentences in a row start with the same word; vary them.`);
  return s(9, "Sentence openings are varied.");
}

// ---- integrity assessments ---------------------------------------------------------------

const PLACEHOLDER =
  /\b(?:TODO|TBD|FIXME|XXX)\b|lorem ipsum|\{\{[^}]*\}\}|\[\s*(?:insert|add|your|placeholder|enter|name of)\b[^\]]*\]|<\s*(?:insert|placeholder)[^>]*>/i;

function placeholders(c: QaContext): Outcome {
  const m = PLACEHOLDER.exec(c.fullMarkdown);
  if (m) return s(0, `A leftover placeholder remains: "${m[0].slice(0, 60)}".`);
  return s(9, "No leftover placeholders.");
}

function duplicates(c: QaContext): Outcome {
  const seen = new Set<string>();
  const dup = new Set<string>();
  const all = [
    ...c.sentences.map((x) => x.words),
    ...c.notes.flatMap((n) => splitSentences(n.text).map(lowerWords)),
  ];
  for (const w of all) {
    if (w.length < 5) continue;
    const key = w.join(" ");
    if (seen.has(key)) dup.add(key);
    seen.add(key);
  }
  if (dup.size) {
    const first = [...dup][0];
    return s(0, `${dup.size} sentence(s) are repeated, e.g. "${first.slice(0, 80)}".`);
  }
  return s(9, "No sentence is repeated.");
}

function linksKnown(c: QaContext): Outcome {
  const facts = c.brief.siteFacts;
  const index = crawledIndex(facts);
  const internal = c.links.filter((l) => isInternal(l.url, facts));
  const unknown = internal.filter((l) => !index.has(l.url));
  if (!internal.length) return s(9, "No internal links to verify.");
  if (unknown.length) {
    return s(
      0,
      `${unknown.length} internal link(s) are not URLs the crawl fetched (scheme included), ` +
        `e.g. ${unknown[0].url}.`,
    );
  }
  return s(9, `All ${internal.length} internal links are URLs the crawl fetched.`);
}

function languageMatch(c: QaContext): Outcome {
  // Everything a reader sees except the title, which is the caller's topic verbatim.
  const text = [
    c.draft.metaDescription,
    ...c.body.filter((b) => !(b.kind === "heading" && b.level === 1)).map((b) => b.text),
    ...c.notes.map((b) => b.text),
  ].join("\n");
  const v = compareLanguage(text, c.brief.language);
  if (v.kind === "match") {
    return s(9, `The text is written in the project's language (${c.language}).`);
  }
  if (v.kind === "mismatch") {
    return s(
      0,
      `The text reads as "${v.detected}", not the project's language "${c.language}" ` +
        `(score capped at ${QA_LANGUAGE_CAP}).`,
      QA_LANGUAGE_CAP,
    );
  }
  return s(null, `Skipped: ${v.reason}.`);
}

/** Languages written without spaces: topic terms are found as substrings there. */
const UNSPACED = new Set(["ja", "zh", "th", "lo", "km", "my"]);

/**
 * Share of body sentences that name the subject: a word of the keyword or the topic, or of the
 * title of a crawled page relevant to the keyword, allowing inflections. Boilerplate that would
 * read the same for any topic names it only where the keyword was slotted in.
 */
function topicSpecificity(c: QaContext): Outcome {
  const terms = topicTerms(c);
  const prose = c.sentences.filter((x) => x.kind !== "table" && x.words.length >= 4);
  if (!terms.length || prose.length < 5) {
    return s(null, "Skipped: too few sentences or no topic words to measure.");
  }
  const unspaced = UNSPACED.has(c.language);
  const names = (x: (typeof prose)[number]) =>
    unspaced
      ? terms.some((t) => x.text.toLowerCase().includes(t))
      : x.words.some((w) => terms.some((t) => sameStem(w, t)));
  const hits = prose.filter(names).length;
  const share = hits / prose.length;
  const pct = Math.round(share * 100);
  const msg = `${hits} of ${prose.length} sentences (${pct}%) name the subject ` +
    `(${terms.slice(0, 6).join(", ")})`;
  if (share >= 0.3) return s(9, `${msg}; 30% or more wanted.`);
  if (share >= 0.2) return s(5, `${msg}; much of the text would read the same for any topic.`);
  return s(
    1,
    `${msg}: the text would read the same for any topic (score capped at ${QA_GENERIC_CAP}).`,
    QA_GENERIC_CAP,
  );
}

function topicTerms(c: QaContext): string[] {
  const b = c.brief;
  // Page titles add the site's own words for the subject ("trail"); short ones ("fit") are too
  // common in any advice text to count.
  const related = linkCandidates(b, 12).filter((l) => l.relevance > 0)
    .flatMap((l) => contentWords(l.anchor, b.language)).filter((w) => w.length >= 4);
  return [
    ...new Set(
      [...contentWords(b.primaryKeyword, b.language), ...contentWords(b.topic, b.language)]
        .concat(related)
        .filter((w) =>
          (UNSPACED.has(c.language) ? w.length >= 2 : w.length >= 3) && !/^\d+$/.test(w)
        ),
    ),
  ];
}

const NUMBER = /(?:[$€£¥]\s?)?\d[\d.,]*\s?%?/g;

function numbersSourced(c: QaContext): Outcome {
  const f = c.brief.siteFacts;
  const facts = [
    c.brief.topic,
    c.brief.primaryKeyword,
    f.host,
    ...f.pages.flatMap((p) => [p.url, p.title ?? "", p.h1 ?? "", p.description ?? ""]),
  ].join(" ");
  const factNumbers = new Set((facts.match(NUMBER) ?? []).map(numberKey));
  const text = [c.draft.metaDescription, ...c.body.map((b) => b.text)].join(" ");
  const unsourced = new Set<string>();
  for (const raw of text.match(NUMBER) ?? []) {
    const key = numberKey(raw);
    const small = /^\d+$/.test(key) && Number(key) <= 10;
    if (!small && !factNumbers.has(key)) unsourced.add(raw.trim());
  }
  const n = unsourced.size;
  if (!n) return s(9, "Every figure in the text appears in the brief or the site's pages.");
  const list = [...unsourced].slice(0, 5).join(", ");
  const msg = `${n} figure(s) not found in the brief or the site's pages (${list}); verify or cut`;
  return s(n <= 2 ? 6 : 3, `${msg}.`);
}

/**
 * The built-in writer's text is an outline (headings, points to cover, pages to link, editor's
 * notes), however many words those make: it never scores like an article. A model's draft is
 * judged by the other assessments (this one is skipped and weighs nothing).
 */
function notAnOutline(c: QaContext): Outcome {
  if (c.draft.generator.kind !== "builtin_outline") {
    return s(
      null,
      "Skipped: written as an article by a model, not by the built-in outline writer.",
    );
  }
  return s(
    0,
    `This is an outline from the built-in writer (no language model is configured on this ` +
      `server): headings, points to cover, pages to link and editor's notes, not an article a ` +
      `reader can use. Its ${c.bodyWords.length} body words do not change that: an outline ` +
      `never scores above ${QA_OUTLINE_CAP}. A person or a model must write it.`,
    QA_OUTLINE_CAP,
  );
}

function draftNotes(c: QaContext): Outcome {
  const n = c.notes.length;
  if (n === 0) return s(9, "No open editor's notes.");
  const msg = `${n} editor's note(s) mark gaps a person must fill before publishing`;
  if (n <= 3) return s(6, `${msg}.`);
  if (n <= 6) return s(5, `${msg}.`);
  if (n <= 10) return s(3, `${msg}.`);
  return s(1, `${msg}; the draft is mostly gaps.`);
}

// ---- helpers -----------------------------------------------------------------------------

function numberKey(raw: string): string {
  return raw.replace(/[\s$€£¥%]/g, "").replace(/[.,]+$/, "");
}
