/**
 * The built-in writer: the default when no model is configured. Deterministic, offline, no
 * weights. It does not pretend to write an article: it writes an **outline** (a writer's brief)
 * built only from what it knows: the topic and keyword and their words, the search intent, the
 * audience named in the topic, the project's country and the pages the crawl fetched (quoted and
 * linked by their crawled URL). Every section says what it must cover; editor's notes mark what a
 * person or a model must write.
 *
 * Its drafts are stored as `generator.kind: "builtin_outline"`, score low in QA (an outline has
 * almost no body text for a reader) and are not charged as an article (see the catalogue).
 */

import {
  type ArticleBrief,
  type Draft,
  NOTE_MARKER,
  type QaFeedback,
  type Writer,
  WriterError,
} from "./writer.ts";
import { type LinkCandidate, linkCandidates } from "./site_links.ts";
import { primary } from "./readability.ts";
import { repairDraft } from "./repair.ts";
import { contentWords, sameWord } from "./keyphrase.ts";
import { lowerWords } from "./markdown_text.ts";

type Intent = "howto" | "whatis" | "compare" | "price" | "general";

/** Everything the outline may say, all of it taken from the brief. */
interface Vars {
  /** The keyword as given. */
  k: string;
  /** The keyword with a capital first letter, for headings. */
  K: string;
  /** The keyword's last content word ("shoes" in "running shoes"): what the text is about. */
  head: string;
  /** The other content words of the keyword and topic ("running", "beginners"). */
  terms: string[];
  /** Who the topic says it is for ("beginners" in "… for beginners"), or null. */
  audience: string | null;
  /** Words of the relevant crawled pages' titles that the keyword and topic do not have. */
  related: string[];
  host: string;
  country: string | null;
}

interface Section {
  heading: string;
  points: string[];
  note: string;
}

/** All wording of one language. Adding a language means adding one of these. */
interface OutlinePack {
  disclosure: (v: Vars, pages: number) => string;
  lead: (v: Vars) => string;
  sections: Record<Intent, (v: Vars) => Section[]>;
  audience: (v: Vars, audience: string) => Section;
  local: (v: Vars) => Section;
  terms: { heading: (v: Vars) => string; item: (term: string, v: Vars) => string; note: string };
  pages: {
    heading: (v: Vars) => string;
    lead: (v: Vars) => string;
    none: (v: Vars) => string;
  };
  faq: { heading: (v: Vars) => string; questions: (v: Vars, intent: Intent) => string[] };
  meta: (v: Vars, intent: Intent) => string;
  /** Matches the topic's audience clause ("for beginners"). */
  audienceRe: RegExp;
  intents: Record<Exclude<Intent, "general">, RegExp>;
  /** Keyword words that say what kind of page is wanted rather than what it is about. */
  modifiers: Set<string>;
}

const list = (xs: string[]) =>
  xs.length <= 1 ? xs.join("") : `${xs.slice(0, -1).join(", ")} and ${xs.at(-1)}`;

const EN: OutlinePack = {
  disclosure: (v, pages) =>
    `${NOTE_MARKER} Outline, not an article: no language model is configured on this server, ` +
    `so this brief was assembled from the topic, the keyword "${v.k}" and ${pages} page(s) the ` +
    `crawl fetched on ${v.host}. A person or a model must write every section and check each ` +
    `fact before anything is published.`,
  lead: (v) =>
    `This article will explain ${v.k}${v.audience ? ` for ${v.audience}` : ""}. ` +
    `Its terms: ${list(v.terms.slice(0, 5))}.` +
    (v.related.length ? ` Pages of the site also speak of ${list(v.related.slice(0, 3))}.` : ""),
  sections: {
    howto: (v) => [
      {
        heading: `${v.K}: what you need before you start`,
        points: [
          `Tools, time and skills that ${v.k} takes.`,
          `Which ${v.head} situations this guide does not cover.`,
        ],
        note: `${NOTE_MARKER} List what the reader must have ready, from your own experience.`,
      },
      {
        heading: `${v.K} step by step`,
        points: [
          `Each step of ${v.k}, in the order a reader follows it.`,
          `How to check each step worked before moving on.`,
          `Where people most often go wrong with ${v.head}.`,
        ],
        note: `${NOTE_MARKER} Write the real steps; number them.`,
      },
    ],
    whatis: (v) => [
      {
        heading: `${v.K}: a plain definition`,
        points: [
          `What ${v.head} means, in one or two sentences.`,
          `What it is often confused with.`,
        ],
        note: `${NOTE_MARKER} Define ${v.head} in your own words, with one example.`,
      },
      {
        heading: `How ${v.head} works in practice`,
        points: [`The parts of ${v.k} and how they fit together.`, `When it matters to a reader.`],
        note: `${NOTE_MARKER} Explain it with a case from your own work.`,
      },
    ],
    compare: (v) => [
      {
        heading: `How to compare ${v.k}`,
        points: [
          `The criteria that separate good ${v.head} from poor ones.`,
          `Which criteria matter most for whom.`,
        ],
        note: `${NOTE_MARKER} Name the criteria you judge ${v.head} by, and why.`,
      },
      {
        heading: `${v.K}: the options side by side`,
        points: [`The options you recommend, each with its strengths and limits.`],
        note: `${NOTE_MARKER} Name only products or services you can stand behind.`,
      },
    ],
    price: (v) => [
      {
        heading: `What ${v.k} costs`,
        points: [
          `Your real prices or ranges for ${v.head}, with the date checked.`,
          `What is included and what is charged separately.`,
        ],
        note: `${NOTE_MARKER} Add real figures; this outline invents none.`,
      },
      {
        heading: `What moves the price of ${v.head}`,
        points: [`Scope, quality and timing, as they apply to ${v.k}.`],
        note: `${NOTE_MARKER} Give one worked example with real numbers.`,
      },
    ],
    general: (v) => [
      {
        heading: `${v.K}: what readers need to know`,
        points: [
          `The meaning of ${v.k}, and who it is for.`,
          `The choices a reader faces with ${v.head}.`,
        ],
        note: `${NOTE_MARKER} Answer these with facts about ${v.k} you can check.`,
      },
      {
        heading: `Choosing and using ${v.k}`,
        points: [
          `How to choose between kinds of ${v.head}.`,
          `The mistakes people make with ${v.head}, and how to avoid them.`,
        ],
        note: `${NOTE_MARKER} Add the advice only hands-on experience gives.`,
      },
    ],
  },
  audience: (v, a) => ({
    heading: `${v.K} for ${a}`,
    points: [`What ${a} need to know first about ${v.head}.`, `What ${a} can leave for later.`],
    note: `${NOTE_MARKER} Write for ${a}: their questions, their level.`,
  }),
  local: (v) => ({
    heading: v.country ? `${v.K} in ${v.country}` : `Local rules for ${v.k}`,
    points: [
      `Rules, standards or habits ${v.country ? `in ${v.country} ` : ""}that change ${v.k}.`,
    ],
    note: `${NOTE_MARKER} Add local facts only from sources you name.`,
  }),
  terms: {
    heading: () => "Terms to explain",
    item: (t) => `**${t}**: what it means in this article.`,
    note: `${NOTE_MARKER} Define each term the first time the text uses it.`,
  },
  pages: {
    heading: (v) => `Pages on ${v.host} to link`,
    lead: () => "The crawl fetched these pages; each summary is quoted from the page itself.",
    none: (v) =>
      `${NOTE_MARKER} The crawl has fetched no pages of ${v.host} yet, so this outline links ` +
      `nothing. Run an audit of the project first; its pages become the link targets.`,
  },
  faq: {
    heading: (v) => `${v.K}: questions to answer`,
    questions: (v: Vars, intent: Intent) => {
      const q = [
        intent === "whatis"
          ? `Why ${v.head} matters to a reader.`
          : `The meaning of ${v.k} in one sentence.`,
        intent === "price"
          ? `When a cheaper option of ${v.head} is worth it.`
          : `The cost of ${v.k}, and what moves it.`,
        intent === "howto" ? `The time ${v.k} takes.` : `How to choose ${v.k}.`,
      ];
      if (v.audience) q.push(`Whether ${v.audience} should start with ${v.k}, and which first.`);
      for (const t of v.terms.filter((t) => t !== v.head).slice(0, 2)) {
        q.push(`What ${t} changes about ${v.head}.`);
      }
      return q;
    },
  },
  meta: (v, intent) =>
    `Outline for an article on ${v.k}: ${
      {
        howto: "what to prepare and each step",
        whatis: "a definition and how it works",
        compare: "how to compare the options",
        price: "costs and what moves them",
        general: "what readers need to know and how to choose",
      }[intent]
    }, terms and questions to answer.`,
  audienceRe: /\bfor ([\p{L}\p{N}' -]{3,40})$/iu,
  intents: {
    howto: /^(how to|how do|how can)\b|\b(guide|tips|steps|tutorial|checklist|diy)\b/,
    whatis: /^(what is|what are|what does|why)\b|\b(meaning|definition|explained)\b/,
    compare: /\b(best|top|vs|versus|compare|comparison|review|reviews|alternatives?)\b/,
    price: /\b(price|prices|pricing|cost|costs|cheap|affordable|how much|fees?|rates?)\b/,
  },
  modifiers: new Set(
    ("best top cheap cheapest affordable guide tips steps tutorial checklist diy meaning " +
      "definition explained review reviews compare comparison vs versus alternative alternatives " +
      "price prices pricing cost costs near me choose choosing").split(" "),
  ),
};

const PACKS: Record<string, OutlinePack> = { en: EN };

/** Creates the built-in writer. Pure: the same brief always gives byte-identical output. */
export function createBuiltinWriter(): Writer {
  return {
    name: "builtin",
    kind: "builtin_outline",
    write: (brief) => Promise.resolve(buildDraft(brief)),
    revise: (brief: ArticleBrief, _draft: Draft, _feedback: QaFeedback[]) =>
      // An outline cannot rewrite prose; the revision re-applies the mechanical repairs.
      Promise.resolve(repairDraft(buildDraft(brief), brief)),
  };
}

/** Builds the outline synchronously (exported for the benchmark and tests). */
export function buildDraft(brief: ArticleBrief): Draft {
  const topic = brief.topic.trim();
  const k = brief.primaryKeyword.trim().replace(/\s+/g, " ");
  if (!topic || !k) {
    throw new WriterError("invalid_brief", "The brief needs a topic and a keyword.");
  }
  const lang = primary(brief.language);
  const pack = PACKS[lang] ?? EN;
  const host = brief.siteFacts.host.toLowerCase().replace(/^www\./, "");
  const links = linkCandidates(brief, 5);
  const kwWords = contentWords(k, lang).filter((w) => !pack.modifiers.has(w));
  const audience = pack.audienceRe.exec(topic)?.[1]?.trim().toLowerCase() ?? null;
  const topicWords = contentWords(topic, lang).filter((w) =>
    !pack.modifiers.has(w) && !/^\d+$/.test(w)
  );
  const terms = unique([...kwWords, ...topicWords]).slice(0, 6);
  const head = kwWords.at(-1) ?? lowerWords(k).at(-1) ?? k;
  // Words the site's own relevant pages use that the keyword does not: "trail" next to "shoes".
  const hostWords = new Set(lowerWords(host.replace(/[.:-]/g, " ")));
  const related = unique(
    links.filter((l) => l.relevance > 0).flatMap((l) =>
      contentWords(l.anchor, lang).filter((w) =>
        w.length > 3 && !terms.some((t) => sameWord(w, t)) && !/\d/.test(w) && !hostWords.has(w)
      )
    ),
  ).slice(0, 5);
  const v: Vars = {
    k,
    K: k.charAt(0).toLocaleUpperCase(lang) + k.slice(1),
    head,
    terms,
    audience,
    related,
    host,
    country: countryName(brief.country, lang),
  };
  const intent = classify(k.toLowerCase(), pack);
  const out: string[] = [`# ${topic}`, "", `> ${pack.disclosure(v, brief.siteFacts.pages.length)}`];
  out.push("");
  if (!PACKS[lang]) {
    out.push(
      `> ${NOTE_MARKER} The built-in writer has no wording for "${lang}" yet, so this outline is ` +
        `in English; the article must be written in the project's language.`,
      "",
    );
  }
  out.push(pack.lead(v), "");
  const section = (s: Section) => {
    out.push(`## ${s.heading}`, "");
    for (const p of s.points) out.push(`- ${p}`);
    out.push("", `> ${s.note}`, "");
  };
  pack.sections[intent](v).forEach(section);
  if (audience) section(pack.audience(v, audience));
  section(pack.local(v));

  out.push(`## ${pack.terms.heading(v)}`, "");
  for (const t of terms) out.push(`- ${pack.terms.item(t, v)}`);
  out.push("", `> ${pack.terms.note}`, "");

  out.push(`## ${pack.pages.heading(v)}`, "");
  if (links.length) {
    out.push(pack.pages.lead(v), "");
    pageList(links, out);
  } else {
    out.push(`> ${pack.pages.none(v)}`, "");
  }

  out.push(`## ${pack.faq.heading(v)}`, "");
  for (const q of pack.faq.questions(v, intent)) out.push(`- ${q}`);
  out.push("");

  return {
    title: topic,
    metaDescription: pack.meta(v, intent),
    markdown: out.join("\n").trimEnd() + "\n",
    generator: { kind: "builtin_outline" },
  };
}

function pageList(links: LinkCandidate[], out: string[]) {
  const quoted = new Set<string>();
  for (const l of links) {
    // Sites often reuse one description on every page; quoting it twice would repeat a sentence.
    const d = l.description && !quoted.has(l.description) ? l.description : null;
    if (d) quoted.add(d);
    out.push(d ? `- [${l.anchor}](${l.url}): “${d}”` : `- [${l.anchor}](${l.url})`);
  }
  out.push("");
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}

function classify(k: string, pack: OutlinePack): Intent {
  for (const intent of ["howto", "whatis", "price", "compare"] as const) {
    if (pack.intents[intent].test(k)) return intent;
  }
  return "general";
}

/** Building an `Intl.DisplayNames` costs about a millisecond; one per language is enough. */
const regionNames = new Map<string, Intl.DisplayNames>();

function countryName(code: string, lang: string): string | null {
  if (!/^[A-Za-z]{2}$/.test(code)) return null;
  try {
    let names = regionNames.get(lang);
    if (!names) {
      regionNames.set(lang, names = new Intl.DisplayNames([lang, "en"], { type: "region" }));
    }
    const name = names.of(code.toUpperCase());
    if (!name || name.toUpperCase() === code.toUpperCase()) return null;
    // "United States" reads better with the article in running English text.
    return lang === "en" && /^(United|Netherlands|Philippines|Czech)/.test(name)
      ? `the ${name}`
      : name;
  } catch {
    return null;
  }
}
