/** Shared test data for the writing tests: a brief, and prose that passes QA on its own merits. */

import type { ArticleBrief, Draft } from "../../domain/writing/writer.ts";

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
 * Unique, short, readable sentences for one section (the scripted model's replies). `seed` keeps
 * sections apart so no sentence repeats across the article; the keyword is used once per
 * paragraph, and every other sentence names the subject (a runner, a beginner) without it.
 */
export function sectionProse(seed: string, keyword: string, paragraphs = 2): string {
  const out: string[] = [];
  let n = 0;
  for (let p = 0; p < paragraphs; p++) {
    const sentences = [`This part on ${seed} looks at ${keyword} from a new angle, part ${p}.`];
    for (let i = 0; i < 5; i++, n++) {
      const opener = OPENERS[(n + seed.length) % OPENERS.length];
      const verb = VERBS[n % VERBS.length];
      const who = n % 2 === 0 ? "each runner" : "the team";
      sentences.push(`${opener} ${verb} ${who} with the ${seed} work in step ${wordFor(n)}.`);
    }
    out.push(sentences.join(" "));
  }
  return out.join("\n\n");
}

function wordFor(n: number): string {
  const w = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
  return `${w[n % 10]}${n >= 10 ? ` again ${w[Math.floor(n / 10) % 10]}` : ""}`;
}

/** A finished article on running shoes as a person would write it: specific, no gaps. */
export const GOOD_MARKDOWN = `# Running shoes for beginners

Choosing running shoes for your first season is easier than the shop walls suggest. A good first pair fits well, feels comfortable from the first step and suits the surfaces you run on. This guide explains what matters, what you can ignore and how to test a pair before you pay.

If you want help in person, read [how we fit shoes](https://shoes.example/guides/fit) or browse our [trail range](https://shoes.example/shop/trail).

## Why running shoes matter for new runners

Your feet strike the ground hundreds of times on every run. A shoe with enough cushioning spreads that load and makes the first weeks kinder to your knees and calves. Beginners often start in old trainers or fashion sneakers. Those soles are usually flat and hard, and the upper may rub after a few kilometres.

A dedicated running shoe also holds the heel in place. That stops blisters and lets the foot roll forward smoothly. You do not need the most expensive model to get these benefits.

## Getting the fit right

Fit matters more than brand, colour or price. Leave about a thumb's width between your longest toe and the end of the shoe, because feet swell during a run. The heel should sit snugly without slipping when you walk briskly. The toe box needs room for your toes to spread.

Try shoes later in the day, when your feet are at their largest. Wear the socks you run in. Many shops let you jog on a treadmill or outside, and a few minutes of running tells you more than any label.

## Cushioning, drop and support

Most beginners do well in a neutral shoe with moderate cushioning. Thick foam feels soft on hard pavements, while a firmer sole gives more feedback on tracks. Heel-to-toe drop describes how much higher the heel sits than the forefoot. A medium drop suits most new runners because it eases strain on the calves.

Stability shoes add firmer foam on the inside of the midsole. They help runners whose ankles roll inward a lot. If you are unsure, ask for a gait check, where staff watch your stride and suggest a shoe that suits it.

## Road or trail running shoes?

Road shoes are light and smooth, made for pavements, paths and treadmills. Trail shoes have deeper lugs for grip on mud, gravel and wet grass. Their uppers are tougher, so thorns and stones do less damage.

Pick the surface you will run on most weeks. A road shoe copes with a dry park path, but a muddy forest trail calls for proper grip. Some runners later buy a second pair and rotate them.

## Caring for your first pair

Loosen the laces every time you take the shoes off, instead of pulling them off with your heel. Let wet shoes dry at room temperature with newspaper inside, never on a radiator, because heat weakens the glue and foam. Brush off mud after trail runs.

Keep your running shoes for running. Walking errands in them wears the sole faster. Watch for creases in the midsole, a worn outsole or new aches after runs, since these signs tell you the cushioning is fading.

## Summary

A beginner needs comfort, a secure heel and room for the toes more than advanced technology. Match the shoe to your usual surface, test it on the move and look after it between runs. With the right pair, the first months of running feel lighter and safer.

## Running shoes: common questions

### How often should I replace running shoes?

Replace them when the cushioning feels flat or the outsole is worn smooth. Aches in the shins or knees after easy runs are another hint.

### Can I use one pair for the gym and for running?

You can, but running shoes are built to roll forward, not to support quick side steps. A separate gym shoe keeps both pairs in better shape.
`;

/** A complete, finished article (no editor's notes) that should score high. */
export function goodArticle(): Draft {
  return {
    title: "Running shoes for beginners",
    metaDescription:
      "Running shoes for beginners: how to judge comfort and fit, what to spend, how to care for them and where to try a pair before you buy.",
    markdown: GOOD_MARKDOWN,
    generator: { kind: "model", model: "test" },
  };
}
