/**
 * The built-in writer: the default when no model is configured. Deterministic, offline, no
 * weights. It lays out an honest, well-structured draft from the topic, the keyword, the
 * project's language and country, and what the crawl knows about the site (page titles and
 * descriptions, quoted and linked), and marks every gap a person has to fill with an editor's note.
 *
 * It never invents facts: no figures, names, quotes or sources beyond the ones the crawl found.
 * The advice it gives is generic on purpose, and the draft says so in its first line.
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

export const BUILTIN_GENERATOR = "builtin-template";

type Intent = "howto" | "whatis" | "compare" | "price" | "general";

/** Values every template sentence may use. */
interface Vars {
  /** The keyword as given. */
  raw: string;
  /** The keyword as it reads in running text ("the best yoga mats" for "best yoga mats"). */
  k: string;
  /** The keyword with a capital first letter, for headings. */
  K: string;
  site: string;
  host: string;
  country: string | null;
}

interface PracticalSection {
  heading: (v: Vars) => string;
  intro: (v: Vars) => string;
  items: string[];
  note: (v: Vars) => string;
}

/** All wording of one language. Adding a language means adding one of these. */
interface LanguagePack {
  disclosure: (v: Vars) => string;
  intro: (v: Vars) => string[];
  basics: { heading: (v: Vars) => string; paragraphs: (v: Vars) => string[] };
  practical: Record<Intent, PracticalSection>;
  /** Follows the practical list whatever the intent. */
  practicalClose: string;
  mistakes: {
    heading: (v: Vars) => string;
    lead: (v: Vars) => string;
    items: string[];
    close: string;
  };
  local: { heading: (v: Vars) => string; paragraphs: (v: Vars) => string[]; note: string };
  site: {
    heading: (v: Vars) => string;
    lead: (v: Vars) => string;
    none: (v: Vars) => string;
    noneNote: (v: Vars) => string;
    homeAnchor: (v: Vars) => string;
  };
  faq: {
    heading: (v: Vars) => string;
    lead: (v: Vars) => string;
    items: { q: string; a: string }[];
    note: string;
  };
  summary: { heading: (v: Vars) => string; paragraphs: (v: Vars) => string[] };
  meta: { parts: (v: Vars, intent: Intent) => string[]; fillers: string[] };
  intents: Record<Exclude<Intent, "general">, RegExp>;
}

const EN: LanguagePack = {
  disclosure: (v) =>
    `${NOTE_MARKER} Structured draft assembled automatically from the topic, the keyword ` +
    `"${v.raw}" and the pages found on ${v.host}, without a language model. ` +
    `A person or a model should complete it and check every statement before it is published.`,
  intro: (v) => [
    `This guide is about ${v.k}. It sets out the questions people tend to ask, the choices ` +
    `they face and the points worth checking before they act. Each section is short, so you can ` +
    `jump straight to the part you need.`,
    `The advice here is general on purpose. Your own case may call for more detail, and the ` +
    `notes in the text show where that detail belongs.`,
  ],
  basics: {
    heading: (v) => `${v.K}: the basics`,
    paragraphs: (v) => [
      `People look for advice on ${v.k} for different reasons. Some want a quick answer. ` +
      `Others plan a larger piece of work and need to see the whole picture first. Knowing ` +
      `which group you are in saves time later.`,
      `A simple way to begin is to write down three things: what you want to achieve, what you ` +
      `already have, and what is holding you back. Keep the list short. It becomes the yardstick ` +
      `for every choice that follows.`,
      `It also helps to decide how much time you can give the task. A rough plan is enough at ` +
      `this stage. You can refine it once you know more.`,
    ],
  },
  practical: {
    howto: {
      heading: (v) => `${v.K}: step by step`,
      intro: (v) =>
        `The steps below give a sensible order of work. They stay general advice on ${v.k}, ` +
        `because the details depend on your situation.`,
      items: [
        "**Define the goal.** Say in one sentence what a good result looks like.",
        "**Check what you have.** List the tools, time and budget you can use.",
        "**Plan the work.** Break the job into small tasks and put them in order.",
        "**Work in stages.** Finish each task before you start the next one.",
        "**Review the result.** Compare it with the goal you wrote down at the start.",
      ],
      note: (v) =>
        `${NOTE_MARKER} Replace these general steps with the exact steps for ${v.k}, in the ` +
        `order your readers should follow them.`,
    },
    whatis: {
      heading: (v) => `${v.K}: the key ideas`,
      intro: (v) =>
        `A clear definition of ${v.k} comes first. After that, a few core ideas explain how ` +
        `the subject works in practice and why it matters to the reader.`,
      items: [
        "**Definition.** State in plain words what the term covers and what it does not.",
        "**Purpose.** Explain the problem it solves and for whom.",
        "**How it works.** Describe the main parts and how they fit together.",
        "**Where it applies.** Name the situations in which it is useful.",
        "**Limits.** Say where it stops being the right choice.",
      ],
      note: () =>
        `${NOTE_MARKER} Write the definition in your own words and add one concrete example ` +
        `from your own work.`,
    },
    compare: {
      heading: (v) => `${v.K}: how to compare the options`,
      intro: (v) =>
        `There is rarely one right answer on ${v.k} for everyone. A fair comparison looks at ` +
        `the same points for each option and weighs them against your own needs.`,
      items: [
        "**Fit.** Does the option solve the problem you actually have?",
        "**Cost over time.** Look beyond the first price to running and upkeep costs.",
        "**Ease of use.** Who will use it day to day, and how much help will they need?",
        "**Support.** What happens when something goes wrong?",
        "**Evidence.** Prefer independent tests and real reviews over marketing claims.",
      ],
      note: () =>
        `${NOTE_MARKER} Name the options you recommend and say why, using only products and ` +
        `facts you can stand behind.`,
    },
    price: {
      heading: (v) => `${v.K}: what shapes the cost`,
      intro: (v) =>
        `Prices for ${v.k} vary, so this draft does not quote any. The points below are the ` +
        `ones that usually move the final figure.`,
      items: [
        "**Scope.** Bigger or more complex jobs take more time and material.",
        "**Quality.** Better materials and more experienced people tend to cost more.",
        "**Timing.** Urgent work and busy seasons can raise the price.",
        "**Location.** Costs differ from one area to another.",
        "**Extras.** Ask what is included and what is billed separately.",
      ],
      note: () =>
        `${NOTE_MARKER} Add your real prices or price ranges here, with the date they were ` +
        `last checked.`,
    },
    general: {
      heading: (v) => `${v.K}: a practical approach`,
      intro: (v) =>
        `A practical approach to ${v.k} keeps the work small and focused. The points below ` +
        `apply to most situations.`,
      items: [
        "**Start with the need.** Be clear about the problem before you look at solutions.",
        "**Gather the facts.** Collect what you know and mark what you still need to find out.",
        "**Compare a few options.** Two or three real choices are enough to decide well.",
        "**Decide and act.** Pick the option that fits best and set a date to start.",
        "**Look back.** Check the result after a while and adjust if needed.",
      ],
      note: (v) =>
        `${NOTE_MARKER} Add the specific advice on ${v.k} that only someone with hands-on ` +
        `experience can give.`,
    },
  },
  practicalClose: "Work through the points in order. Skip one only when you are sure it does not " +
    "apply to your case, and write down why you skipped it.",
  mistakes: {
    heading: (v) => `${v.K}: common mistakes to avoid`,
    lead: (v) => `When you read about ${v.k}, watch out for these habits:`,
    items: [
      "Rushing into a decision before the goal is clear.",
      "Copying what others do without checking that it fits your case.",
      "Looking only at the first cost and ignoring the long run.",
      "Skipping the final check, so small errors slip through.",
      "Trying to do everything at once instead of in stages.",
    ],
    close: "None of these is hard to avoid. A short checklist and a little patience go a long way.",
  },
  local: {
    heading: (v) => v.country ? `Local points to check in ${v.country}` : "Local points to check",
    paragraphs: (v) => [
      `Rules, prices and habits can differ from one country to the next. ` +
      (v.country
        ? `If you are in ${v.country}, check local guidance before you act. `
        : `Check local guidance before you act. `) +
      `Sources written for your own area are the safest guide.`,
      `Ask a local professional when the stakes are high. A short conversation can prevent a ` +
      `costly mistake.`,
    ],
    note:
      `${NOTE_MARKER} Add any local rules, standards or service areas that apply to your readers.`,
  },
  site: {
    heading: (v) => `More on ${v.site}`,
    lead: (v) =>
      `These pages on ${v.site} are related to ${v.k}. Each summary is quoted from the page ` +
      `itself.`,
    none: (v) =>
      `The crawl has not found pages on ${v.site} that could be listed here yet. The home page ` +
      `is the best place to start for now.`,
    noneNote: (v) =>
      `${NOTE_MARKER} Link the pages of ${v.site} that cover ${v.k} once they exist, and say ` +
      `what the reader will find on each.`,
    homeAnchor: (v) => `${v.site} home page`,
  },
  faq: {
    heading: (v) => `${v.K}: frequently asked questions`,
    lead: (v) => `The questions below are common starting points for anyone reading about ${v.k}.`,
    items: [
      {
        q: "Where should I start?",
        a: "Start with the goal. Write it down in one sentence, then read the basics section " +
          "above. It shows which parts of this guide matter most for you.",
      },
      {
        q: "Do I need expert help?",
        a: "That depends on the size of the job and on your own experience. Small, low-risk " +
          "tasks are often fine to handle alone. For complex or risky work, a qualified expert " +
          "is the safer choice.",
      },
      {
        q: "How do I know it worked?",
        a: "Compare the result with the goal you set at the start. If it falls short, go back " +
          "over the steps and find where things went wrong.",
      },
    ],
    note: `${NOTE_MARKER} Replace or extend these questions with the ones your customers really ` +
      `ask, and answer them with facts you can check.`,
  },
  summary: {
    heading: () => "Summary and next steps",
    paragraphs: (v) => [
      `This guide covered ${v.k}: the basics, a practical order of work, the mistakes to avoid ` +
      `and the questions that come up most. Start small, learn from each step and adjust as ` +
      `you go.`,
      `Keep notes as you work. They make the next round faster and help you explain your ` +
      `choices to others.`,
      `If you want to go further, the pages listed above on ${v.site} are a good next stop.`,
    ],
  },
  meta: {
    parts: (v, intent) => [
      `${v.K}: the basics`,
      {
        howto: "the steps in order",
        whatis: "the key ideas",
        compare: "how to compare options",
        price: "what shapes the cost",
        general: "a practical approach",
      }[intent],
      "common mistakes",
      "answers to frequent questions",
      `related pages on ${v.site}`,
    ],
    fillers: ["A clear, practical guide.", "Read it before you decide.", "Short and practical."],
  },
  intents: {
    howto: /^(how to|how do|how can)\b|\b(guide|tips|steps|tutorial|checklist|diy)\b/,
    whatis: /^(what is|what are|what does|why)\b|\b(meaning|definition|explained)\b/,
    compare: /\b(best|top|vs|versus|compare|comparison|review|reviews|alternatives?)\b/,
    price: /\b(price|prices|pricing|cost|costs|cheap|affordable|how much|fees?|rates?)\b/,
  },
};

const PACKS: Record<string, LanguagePack> = { en: EN };

/** Creates the built-in writer. Pure: the same brief always gives byte-identical output. */
export function createBuiltinWriter(): Writer {
  return {
    name: "builtin",
    write: (brief) => Promise.resolve(buildDraft(brief)),
    revise: (brief: ArticleBrief, _draft: Draft, _feedback: QaFeedback[]) =>
      // Templates cannot rewrite prose; the revision re-applies the mechanical repairs.
      Promise.resolve(repairDraft(buildDraft(brief), brief)),
  };
}

/** Builds the draft synchronously (exported for the benchmark and tests). */
export function buildDraft(brief: ArticleBrief): Draft {
  const topic = brief.topic.trim();
  const k = brief.primaryKeyword.trim().replace(/\s+/g, " ");
  if (!topic || !k) {
    throw new WriterError("invalid_brief", "The brief needs a topic and a keyword.");
  }
  const lang = primary(brief.language);
  const pack = PACKS[lang] ?? EN;
  const host = brief.siteFacts.host.toLowerCase().replace(/^www\./, "");
  const v: Vars = {
    raw: k,
    k: lang === "en" && /^(best|top|cheapest|most|latest)\b/i.test(k) ? `the ${k}` : k,
    K: k.charAt(0).toLocaleUpperCase(lang) + k.slice(1),
    site: host,
    host,
    country: countryName(brief.country, lang),
  };
  const intent = classify(k.toLowerCase(), pack);
  const links = linkCandidates(brief, 5);
  const out: string[] = [`# ${topic}`, "", `> ${pack.disclosure(v)}`, ""];
  if (!PACKS[lang]) {
    out.push(
      `> ${NOTE_MARKER} The built-in writer has no templates for "${lang}" yet, so this draft is ` +
        `in English; it must be written in the project's language before it is published.`,
      "",
    );
  }
  const para = (s: string) => out.push(s, "");
  const h = (level: number, s: string) => out.push(`${"#".repeat(level)} ${s}`, "");
  const list = (items: string[], ordered = false) => {
    items.forEach((it, i) => out.push(`${ordered ? `${i + 1}.` : "-"} ${it}`));
    out.push("");
  };

  pack.intro(v).forEach(para);

  h(2, pack.basics.heading(v));
  pack.basics.paragraphs(v).forEach(para);

  const p = pack.practical[intent];
  h(2, p.heading(v));
  para(p.intro(v));
  list(p.items, intent === "howto");
  para(pack.practicalClose);
  para(`> ${p.note(v)}`);

  h(2, pack.mistakes.heading(v));
  para(pack.mistakes.lead(v));
  list(pack.mistakes.items);
  para(pack.mistakes.close);

  h(2, pack.local.heading(v));
  pack.local.paragraphs(v).forEach(para);
  para(`> ${pack.local.note}`);

  h(2, pack.site.heading(v));
  siteSection(pack, v, links, out);

  h(2, pack.faq.heading(v));
  para(pack.faq.lead(v));
  for (const item of pack.faq.items) {
    h(3, item.q);
    para(item.a);
  }
  para(`> ${pack.faq.note}`);

  h(2, pack.summary.heading(v));
  pack.summary.paragraphs(v).forEach(para);

  return {
    title: topic,
    metaDescription: buildMeta(pack, v, intent),
    markdown: out.join("\n").trimEnd() + "\n",
    generator: BUILTIN_GENERATOR,
  };
}

function siteSection(pack: LanguagePack, v: Vars, links: LinkCandidate[], out: string[]) {
  if (!links.length) {
    out.push(pack.site.none(v), "");
    out.push(`- [${pack.site.homeAnchor(v)}](https://${v.host}/)`, "");
    out.push(`> ${pack.site.noneNote(v)}`, "");
    return;
  }
  out.push(pack.site.lead(v), "");
  const quoted = new Set<string>();
  for (const l of links) {
    // Sites often reuse one description on every page; quoting it twice would repeat a sentence.
    const d = l.description && !quoted.has(l.description) ? l.description : null;
    if (d) quoted.add(d);
    out.push(d ? `- [${l.anchor}](${l.url}): “${d}”` : `- [${l.anchor}](${l.url})`);
  }
  out.push("");
}

function classify(k: string, pack: LanguagePack): Intent {
  for (const intent of ["howto", "whatis", "price", "compare"] as const) {
    if (pack.intents[intent].test(k)) return intent;
  }
  return "general";
}

/** Joins the parts into 120–156 characters, dropping or padding parts as needed. */
function buildMeta(pack: LanguagePack, v: Vars, intent: Intent): string {
  const parts = pack.meta.parts(v, intent);
  const join = (xs: string[]) => {
    if (xs.length === 1) return `${xs[0]}.`;
    return `${xs.slice(0, -1).join(", ")} and ${xs.at(-1)}.`;
  };
  let best = join(parts);
  for (let n = parts.length; n >= 1 && [...best].length > 156; n--) best = join(parts.slice(0, n));
  for (const f of pack.meta.fillers) {
    if ([...best].length >= 120) break;
    if ([...`${best} ${f}`].length <= 156) best = `${best} ${f}`;
  }
  if ([...best].length > 156) best = [...best].slice(0, 155).join("").replace(/\s+\S*$/, "") + "…";
  return best;
}

function countryName(code: string, lang: string): string | null {
  if (!/^[A-Za-z]{2}$/.test(code)) return null;
  try {
    const name = new Intl.DisplayNames([lang, "en"], { type: "region" }).of(code.toUpperCase());
    if (!name || name.toUpperCase() === code.toUpperCase()) return null;
    // "United States" reads better with the article in running English text.
    return lang === "en" && /^(United|Netherlands|Philippines|Czech)/.test(name)
      ? `the ${name}`
      : name;
  } catch {
    return null;
  }
}
