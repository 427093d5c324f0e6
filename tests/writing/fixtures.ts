/** Shared test data for the writing tests: a brief, and prose that passes QA on its own merits. */

import type { ArticleBrief } from "../../domain/writing/writer.ts";

export const HOST = "shoes.example";

export function brief(overrides: Partial<ArticleBrief> = {}): ArticleBrief {
  return {
    topic: "Running shoes for beginners",
    primaryKeyword: "running shoes",
    language: "en",
    country: "GB",
    siteFacts: {
      host: HOST,
      pages: [
        {
          url: `https://${HOST}/`,
          title: "Shoes Example – independent running shop",
          h1: "Shoes Example",
          description: "An independent running shop with a fitting service in 3 stores.",
        },
        {
          url: `https://${HOST}/guides/fit`,
          title: "How we fit running shoes",
          h1: "Fitting guide",
          description: "Our staff watch you run and suggest shoes that suit your stride.",
        },
        {
          url: `https://${HOST}/shop/trail`,
          title: "Trail shoes",
          h1: "Trail shoes",
          description: null,
        },
      ],
    },
    ...overrides,
  };
}

const OPENERS = [
  "Good planning",
  "A clear goal",
  "Careful testing",
  "Honest feedback",
  "A short checklist",
  "Steady practice",
  "A calm start",
  "Simple habits",
];
const VERBS = ["helps", "shapes", "guides", "supports"];

/**
 * Unique, short, readable sentences for one section. `seed` keeps sections apart so no sentence
 * repeats across the article; the keyword is used once per paragraph.
 */
export function sectionProse(seed: string, keyword: string, paragraphs = 2): string {
  const out: string[] = [];
  let n = 0;
  for (let p = 0; p < paragraphs; p++) {
    const sentences = [`This part on ${seed} looks at ${keyword} from a new angle, part ${p}.`];
    for (let i = 0; i < 5; i++, n++) {
      const opener = OPENERS[(n + seed.length) % OPENERS.length];
      const verb = VERBS[n % VERBS.length];
      sentences.push(`${opener} ${verb} the ${seed} work in step ${wordFor(n)}.`);
    }
    out.push(sentences.join(" "));
  }
  return out.join("\n\n");
}

function wordFor(n: number): string {
  const w = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
  return `${w[n % 10]}${n >= 10 ? ` again ${w[Math.floor(n / 10) % 10]}` : ""}`;
}

/** A complete, finished article (no editor's notes) that should score high. */
export function goodArticle(keyword = "running shoes"): {
  title: string;
  metaDescription: string;
  markdown: string;
  generator: string;
} {
  const sections = ["comfort", "fit", "budget", "care", "trail", "summary"];
  const md = [
    "# Running shoes for beginners",
    "",
    `Choosing ${keyword} is easier with a plan. This guide walks through comfort, fit and care.`,
    "",
    `See [how we fit shoes](https://${HOST}/guides/fit) and our [trail range](https://${HOST}/shop/trail).`,
    "",
  ];
  sections.forEach((s, i) => {
    md.push(`## ${i % 2 === 0 ? `Running shoes and ${s}` : `Notes on ${s}`}`, "");
    md.push(sectionProse(s, keyword), "");
  });
  return {
    title: "Running shoes for beginners",
    metaDescription:
      "Running shoes for beginners: how to judge comfort and fit, what to spend, how to care for them and where to try a pair before you buy.",
    markdown: md.join("\n"),
    generator: "test",
  };
}
