/**
 * A well-behaved fake model for the chat-completions fake: answers the outline, introduction,
 * section, FAQ and revision calls of the model writer with content that passes QA. Tests vary
 * only the links it writes (they must be pages the brief knows) and the revision it returns.
 */
import { type Reply, schemaName, userText } from "./fake_openai.ts";
import { sectionProse } from "./fixtures.ts";

export const KW = "running shoes";

export const OUTLINE = {
  title: "Running shoes for beginners",
  meta_description:
    "Running shoes for beginners: how to judge comfort and fit, what to spend, how to care for them and where to try a pair before you buy.",
  sections: [
    { heading: "Running shoes and comfort", subheadings: [], key_points: ["a"], link_urls: [] },
    { heading: "Getting the fit right", subheadings: [], key_points: ["b"], link_urls: [] },
    { heading: "Running shoes on a budget", subheadings: [], key_points: ["c"], link_urls: [] },
    { heading: "Caring for your pair", subheadings: [], key_points: ["d"], link_urls: [] },
    { heading: "Summary", subheadings: [], key_points: ["e"], link_urls: [] },
  ],
  faq_heading: "Running shoes: questions",
  faq_questions: ["How often should I replace them?"],
};

/**
 * @example
 * ```ts
 * const fake = startFakeOpenAI(scriptedModel({ introLinks: "[home](https://shoes.example/)", ... }));
 * ```
 */
export function scriptedModel(
  opts: { introLinks: string; revision: { title: string; markdown: string } },
  // deno-lint-ignore no-explicit-any
): (body: any) => Reply {
  return (body) => {
    const name = schemaName(body);
    const prompt = userText(body);
    if (name === "article_outline") return { content: JSON.stringify(OUTLINE) };
    if (name === "article_revision") {
      return {
        content: JSON.stringify({
          title: opts.revision.title,
          meta_description: OUTLINE.meta_description,
          markdown: opts.revision.markdown,
        }),
      };
    }
    if (prompt.startsWith("Write the introduction")) {
      return {
        content: JSON.stringify({
          markdown: `Choosing ${KW} is easier with a plan. ${opts.introLinks}`,
        }),
      };
    }
    const section = /section "([^"]+)"/.exec(prompt)?.[1] ?? "faq";
    const seed = section.toLowerCase().replace(/[^a-z ]/g, "").split(" ").at(-1)!;
    return { content: JSON.stringify({ markdown: sectionProse(seed, KW) }) };
  };
}
