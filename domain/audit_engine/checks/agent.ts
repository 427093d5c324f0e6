/**
 * Agent-readiness: how the site serves AI agents and AI search. The llms.txt and AI-crawler
 * checks belong to the `agents` category (checks/agents.ts has the rest of it); structured data
 * stays in `structure`, since search engines read it first. They are informational, except a
 * malformed `/llms.txt`, which is a warning: a file that is there but unreadable misleads.
 * "Main content needs JavaScript" is the rendered audit's `content_requires_js`.
 *
 * The page check runs in the crawl like every page check; the others run in the
 * agent-readiness step after the crawl (`crawl/post_steps.ts`), which fetches `/llms.txt`
 * through the address guard and reads the robots.txt the crawl stored.
 *
 * @module
 */
import type { PageCheck, StepCheck } from "../types.ts";

/** The AI crawlers whose robots.txt rules are reported (user-agent tokens, as their owners publish them). */
export const AI_CRAWLERS = [
  "GPTBot",
  "ChatGPT-User",
  "OAI-SearchBot",
  "ClaudeBot",
  "Claude-User",
  "Claude-SearchBot",
  "anthropic-ai",
  "PerplexityBot",
  "Perplexity-User",
  "Google-Extended",
  "CCBot",
  "Bytespider",
  "Applebot-Extended",
  "meta-externalagent",
  "Amazonbot",
  "cohere-ai",
] as const;

export const structuredDataMissing: PageCheck = {
  id: "structured_data_missing",
  category: "structure",
  severity: "info",
  impact: 1,
  effort: "medium",
  title: "No JSON-LD structured data",
  detects: "An indexable page without any application/ld+json block (the site's coverage is " +
    "structured_data_coverage).",
  scope: "page",
  eligibility: "indexable",
  evaluate: (p) => p.facts.jsonLdCount === 0,
};

export const AGENT_STEP_CHECKS: readonly StepCheck[] = [
  {
    id: "llms_txt_missing",
    category: "agents",
    severity: "info",
    impact: 0,
    effort: "low",
    title: "No /llms.txt",
    detects: "The site has no /llms.txt (the llmstxt.org proposal: a Markdown guide for " +
      "language models), or serves an HTML page there.",
    scope: "agent",
  },
  {
    id: "llms_txt_malformed",
    category: "agents",
    severity: "warning",
    impact: 1,
    effort: "low",
    title: "Malformed /llms.txt",
    detects: "/llms.txt does not follow the llmstxt.org format: one H1 title first, then " +
      "optional blockquote and text, H2 sections of Markdown link lists.",
    scope: "agent",
  },
  {
    id: "ai_crawler_rules",
    category: "agents",
    severity: "info",
    impact: 0,
    effort: "low",
    title: "AI crawler rules in robots.txt",
    detects: "robots.txt names or blocks common AI crawlers (GPTBot, ClaudeBot, PerplexityBot, " +
      "Google-Extended, CCBot...): which it allows and which it blocks from the home page, " +
      "reported, not judged.",
    scope: "agent",
  },
  {
    id: "structured_data_coverage",
    category: "structure",
    severity: "info",
    impact: 1,
    effort: "medium",
    title: "Structured data coverage below 100 %",
    detects: "The share of indexable pages that carry JSON-LD, when some do not.",
    scope: "agent",
  },
];

/** A problem of an llms.txt body, or none (the llmstxt.org format, read leniently). */
export function llmsTxtProblems(body: string): string[] {
  const problems: string[] = [];
  const lines = body.replace(/^\uFEFF/, "").split(/\r?\n/);
  const first = lines.findIndex((l) => l.trim() !== "");
  if (first < 0) return ["the file is empty"];
  if (!/^# \S/.test(lines[first])) problems.push("the first line is not an H1 title (# Name)");
  const h1s = lines.filter((l) => /^# /.test(l)).length;
  if (h1s > 1) problems.push(`${h1s} H1 titles (one expected)`);
  let section = false;
  let badItems = 0;
  let links = 0;
  for (const l of lines) {
    if (/^## /.test(l)) section = true;
    else if (/^#/.test(l)) continue;
    else if (section && /^\s*[-*] /.test(l)) {
      if (/^\s*[-*] \[[^\]]+\]\([^)\s]+\)/.test(l)) links++;
      else badItems++;
    }
  }
  if (badItems > 0) {
    problems.push(
      `${badItems} list item(s) in H2 sections that are not Markdown links ` +
        "(- [name](url): notes)",
    );
  }
  if (/^\s*<(!doctype|html)/i.test(lines[first])) problems.push("the file is HTML");
  void links;
  return problems.slice(0, 10);
}
