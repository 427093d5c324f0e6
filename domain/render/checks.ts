/**
 * The checks only a rendered page can answer: what JavaScript changed against the raw HTML, the
 * lab metrics, and the mobile layout. Same shape as the catalogue's checks (`CheckBase`: id,
 * category, severity, title, detects) so they join it; their scope is `render` and they read a
 * `RenderResult` instead of raw page facts.
 *
 * `sample: "lab"` checks apply to the throttled lab sample only (home page and top templates);
 * `sample: "dom"` checks to every rendered page.
 *
 * Thresholds are the public ones: Core Web Vitals for LCP and CLS ("good" up to 2.5 s and 0.1,
 * "poor" above 4 s and 0.25), Lighthouse's TBT bands for mobile (200 / 600 ms), Lighthouse's
 * tap-target (48 CSS px) and legible-font rules (60 % of text at 12 px or more), Lighthouse's
 * total-byte-weight warning (5,000 KiB). A metric check fires from "needs improvement" on; its
 * evidence says `needs_improvement` or `poor`.
 *
 * @module
 */
import type { CheckBase } from "../audit_engine/types.ts";
// Past audit_engine/mod.ts on purpose: audit_engine ↔ render, a known circle (layers.test.ts).
import { isNoindex } from "../audit_engine/checks/helpers.ts";
import type { RenderResult } from "./renderer.ts";
import { webMcpToolProblems } from "./agent_view.ts";

/**
 * One affected item: small named facts plus the page `url` (the same contract as the audit's
 * stored findings).
 */
export type Evidence = Record<string, string | number | boolean | null | string[]>;

export interface RenderedPageContext {
  result: RenderResult;
  /** Epoch ms of the audit (for `unavailable_after` in robots directives). */
  now: number;
}

export interface RenderCheck extends CheckBase {
  scope: "render";
  sample: "lab" | "dom";
  /** The page is eligible (counts in the check's denominator). Default: always. */
  applies?: (p: RenderedPageContext) => boolean;
  /** Evidence when the check fires on this page, null when it does not. */
  evaluate: (p: RenderedPageContext) => Evidence | null;
}

export const THRESHOLDS = {
  lcpGoodMs: 2500,
  lcpPoorMs: 4000,
  clsGood: 0.1,
  clsPoor: 0.25,
  tbtGoodMs: 200,
  tbtPoorMs: 600,
  transferWarnBytes: 5000 * 1024,
  tapTargetMinPx: 48,
  fontMinPx: 12,
  /** Share of text that must be legible (>= fontMinPx). */
  legibleShare: 0.6,
  /** Visible characters below which a page has too little text to judge its font sizes. */
  minTextChars: 20,
  /** content_requires_js: the rendered page has at least this many words... */
  contentMinRenderedWords: 100,
  /** ...and the raw HTML less than this share of them. */
  contentRawShare: 0.5,
} as const;

const LIST = 20;

const hasBoth = (p: RenderedPageContext) => p.result.raw !== null;
const hasLab = (p: RenderedPageContext) => p.result.lab !== null;
const NO_HEADERS = new Headers();

/** Meta robots noindex only: an X-Robots-Tag header is the same before and after scripts. */
function metaNoindex(facts: { robotsMeta: string }, now: number): boolean {
  return isNoindex(facts, NO_HEADERS, now);
}

function rating(value: number, good: number, poor: number): string {
  return value > poor ? "poor" : value > good ? "needs_improvement" : "good";
}

function firstCanonical(c: string[], base: string): string | null {
  const v = c[0]?.trim();
  if (!v) return null;
  try {
    return new URL(v, base).href;
  } catch {
    return v;
  }
}

export const RENDER_CHECKS: readonly RenderCheck[] = [
  {
    id: "noindex_only_in_raw_html",
    category: "indexability",
    severity: "critical",
    impact: 5,
    effort: "low",
    title: "noindex in the raw HTML, removed by JavaScript",
    detects: "The HTML as served says noindex and a script removes it. Google may not render a " +
      "noindex page at all, so it stays out of the index whatever the rendered page says.",
    scope: "render",
    sample: "dom",
    applies: hasBoth,
    evaluate: ({ result: r, now }) =>
      metaNoindex(r.raw!, now) && !metaNoindex(r.rendered, now)
        ? { url: r.url, raw_robots: r.raw!.robotsMeta, rendered_robots: r.rendered.robotsMeta }
        : null,
  },
  {
    id: "noindex_only_after_js",
    category: "indexability",
    severity: "warning",
    impact: 4,
    effort: "low",
    title: "noindex added by JavaScript",
    detects: "The served HTML is indexable but a script adds noindex: Google drops the page " +
      "after rendering while crawlers that do not render index it.",
    scope: "render",
    sample: "dom",
    applies: hasBoth,
    evaluate: ({ result: r, now }) =>
      !metaNoindex(r.raw!, now) && metaNoindex(r.rendered, now)
        ? { url: r.url, raw_robots: r.raw!.robotsMeta, rendered_robots: r.rendered.robotsMeta }
        : null,
  },
  {
    id: "canonical_changed_by_js",
    category: "indexability",
    severity: "warning",
    impact: 3,
    effort: "low",
    title: "Canonical changed by JavaScript",
    detects: "The rendered canonical differs from the served one (added, removed or another " +
      "URL); Google may pick either, so serve the intended canonical in the HTML.",
    scope: "render",
    sample: "dom",
    applies: hasBoth,
    evaluate: ({ result: r }) => {
      const raw = firstCanonical(r.raw!.canonicals, r.finalUrl);
      const rendered = firstCanonical(r.rendered.canonicals, r.finalUrl);
      return raw !== rendered
        ? { url: r.url, raw_canonical: raw, rendered_canonical: rendered }
        : null;
    },
  },
  {
    id: "title_changed_by_js",
    category: "structure",
    severity: "info",
    impact: 1,
    effort: "low",
    title: "Title changed by JavaScript",
    detects: "The rendered <title> differs from the served one: search results may show the " +
      "rendered title, link previews and AI crawlers the served one.",
    scope: "render",
    sample: "dom",
    applies: hasBoth,
    evaluate: ({ result: r }) =>
      (r.raw!.title ?? "") !== (r.rendered.title ?? "")
        ? { url: r.url, raw_title: r.raw!.title, rendered_title: r.rendered.title }
        : null,
  },
  {
    id: "h1_changed_by_js",
    category: "structure",
    severity: "info",
    impact: 1,
    effort: "low",
    title: "H1 changed by JavaScript",
    detects: "The first rendered <h1> differs from the served one (or exists in one only).",
    scope: "render",
    sample: "dom",
    applies: hasBoth,
    evaluate: ({ result: r }) =>
      (r.raw!.h1 ?? "") !== (r.rendered.h1 ?? "")
        ? { url: r.url, raw_h1: r.raw!.h1, rendered_h1: r.rendered.h1 }
        : null,
  },
  {
    id: "content_requires_js",
    category: "indexability",
    severity: "warning",
    impact: 3,
    effort: "high",
    title: "Main content needs JavaScript",
    detects: "The rendered page has at least 100 words and the served HTML less than half of " +
      "them: crawlers that do not run scripts (most AI crawlers) see an empty page.",
    scope: "render",
    sample: "dom",
    applies: hasBoth,
    evaluate: ({ result: r }) => {
      const raw = r.raw!.wordCount;
      const rendered = r.rendered.wordCount;
      return rendered >= THRESHOLDS.contentMinRenderedWords &&
          raw < THRESHOLDS.contentRawShare * rendered
        ? { url: r.url, raw_words: raw, rendered_words: rendered }
        : null;
    },
  },
  {
    id: "links_only_after_js",
    category: "structure",
    severity: "warning",
    impact: 3,
    effort: "medium",
    title: "Internal links only after JavaScript",
    detects: "Internal links that exist in the rendered page but not in the served HTML: " +
      "crawlers that do not render never find them, Google finds them later.",
    scope: "render",
    sample: "dom",
    applies: hasBoth,
    evaluate: ({ result: r }) => {
      const served = new Set([...r.raw!.links, ...r.raw!.nofollowLinks]);
      const added = r.rendered.links.filter((l) => !served.has(l));
      return added.length > 0
        ? { url: r.url, count: added.length, links: added.slice(0, LIST) }
        : null;
    },
  },
  {
    id: "lcp_slow",
    category: "performance",
    severity: "warning",
    impact: 3,
    effort: "high",
    title: "Largest Contentful Paint over 2.5 s",
    detects: "Lab LCP on a throttled phone (Lighthouse mobile conditions) above 2.5 s " +
      "(poor above 4 s).",
    scope: "render",
    sample: "lab",
    applies: (p) => hasLab(p) && p.result.lab!.lcpMs !== null,
    evaluate: ({ result: r }) => {
      const lcp = r.lab!.lcpMs!;
      return lcp > THRESHOLDS.lcpGoodMs
        ? {
          url: r.url,
          lcp_ms: lcp,
          rating: rating(lcp, THRESHOLDS.lcpGoodMs, THRESHOLDS.lcpPoorMs),
          element: r.lab!.lcpElement,
          resource: r.lab!.lcpUrl,
        }
        : null;
    },
  },
  {
    id: "cls_high",
    category: "performance",
    severity: "warning",
    impact: 2,
    effort: "medium",
    title: "Cumulative Layout Shift over 0.1",
    detects: "Layout shifts during load add up to more than 0.1 (poor above 0.25): content " +
      "jumps under the reader's finger.",
    scope: "render",
    sample: "lab",
    applies: hasLab,
    evaluate: ({ result: r }) => {
      const cls = r.lab!.cls;
      return cls > THRESHOLDS.clsGood
        ? {
          url: r.url,
          cls,
          rating: rating(cls, THRESHOLDS.clsGood, THRESHOLDS.clsPoor),
          shifted: r.lab!.clsSources,
        }
        : null;
    },
  },
  {
    id: "tbt_high",
    category: "performance",
    severity: "warning",
    impact: 2,
    effort: "high",
    title: "Total Blocking Time over 200 ms",
    detects: "Long scripts block the main thread for more than 200 ms after first paint " +
      "(poor above 600 ms) on a 4x slowed CPU: taps go unanswered (the lab proxy of INP).",
    scope: "render",
    sample: "lab",
    applies: (p) => hasLab(p) && p.result.lab!.fcpMs !== null,
    evaluate: ({ result: r }) => {
      const tbt = r.lab!.tbtMs;
      return tbt > THRESHOLDS.tbtGoodMs
        ? {
          url: r.url,
          tbt_ms: tbt,
          rating: rating(tbt, THRESHOLDS.tbtGoodMs, THRESHOLDS.tbtPoorMs),
          long_tasks: r.lab!.longTasks,
        }
        : null;
    },
  },
  {
    id: "transfer_size_large",
    category: "performance",
    severity: "warning",
    impact: 2,
    effort: "medium",
    title: "Page transfers over 5,000 KiB",
    detects: "Everything the rendered page loaded (documents, scripts, images, fonts, data) " +
      "adds up to more than 5,000 KiB.",
    scope: "render",
    sample: "lab",
    applies: hasLab,
    evaluate: ({ result: r }) =>
      r.lab!.transferBytes > THRESHOLDS.transferWarnBytes
        ? { url: r.url, transfer_bytes: r.lab!.transferBytes, requests: r.lab!.requests }
        : null,
  },
  {
    id: "console_errors",
    category: "structure",
    severity: "info",
    impact: 1,
    effort: "medium",
    title: "JavaScript errors in the console",
    detects: "The page logged console errors or threw uncaught exceptions while rendering.",
    scope: "render",
    sample: "dom",
    evaluate: ({ result: r }) =>
      r.consoleErrorCount > 0
        ? { url: r.url, count: r.consoleErrorCount, errors: r.consoleErrors.slice(0, 10) }
        : null,
  },
  {
    id: "tap_targets_small",
    category: "mobile",
    severity: "warning",
    impact: 2,
    effort: "medium",
    title: "Tap targets too small or too close",
    detects: "Links and buttons smaller than 48x48 CSS px whose 48 px finger area overlaps " +
      "another target (Lighthouse's rule): easy to hit the wrong one.",
    scope: "render",
    sample: "dom",
    applies: (p) => p.result.mobile.tapTargets.examined > 0,
    evaluate: ({ result: r }) =>
      r.mobile.tapTargets.failing > 0
        ? {
          url: r.url,
          failing: r.mobile.tapTargets.failing,
          examined: r.mobile.tapTargets.examined,
          examples: r.mobile.tapTargets.examples,
        }
        : null,
  },
  {
    id: "text_too_small",
    category: "mobile",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "Text too small to read",
    detects: "Less than 60 % of the visible text is at 12 CSS px or more on a phone.",
    scope: "render",
    sample: "dom",
    applies: (p) => p.result.mobile.text.chars >= THRESHOLDS.minTextChars,
    evaluate: ({ result: r }) => {
      const t = r.mobile.text;
      const legible = (t.chars - t.smallChars) / t.chars;
      return legible < THRESHOLDS.legibleShare
        ? {
          url: r.url,
          small_text_share: Math.round((t.smallChars / t.chars) * 1000) / 1000,
          chars: t.chars,
          examples: t.examples,
        }
        : null;
    },
  },
  {
    id: "content_wider_than_viewport",
    category: "mobile",
    severity: "warning",
    impact: 2,
    effort: "medium",
    title: "Content wider than the screen",
    detects: "The page scrolls sideways on a 412 px phone: its content is wider than the " +
      "layout viewport.",
    scope: "render",
    sample: "dom",
    evaluate: ({ result: r }) =>
      r.mobile.scrollWidth > r.mobile.viewportWidth
        ? {
          url: r.url,
          scroll_width: r.mobile.scrollWidth,
          viewport_width: r.mobile.viewportWidth,
          widest_element: r.mobile.widestElement,
        }
        : null,
  },
  {
    id: "requests_refused",
    category: "security",
    severity: "info",
    impact: 1,
    effort: "low",
    title: "Page requests addresses the guard refused",
    detects: "The page asked for resources on private, loopback or link-local addresses (or " +
      "hosts that do not resolve, or WebSockets): broken for visitors, and never fetched by us.",
    scope: "render",
    sample: "dom",
    evaluate: ({ result: r }) =>
      r.blockedCount > 0
        ? {
          url: r.url,
          count: r.blockedCount,
          requests: r.blocked.slice(0, LIST).map((b) => `${b.reason}: ${b.url}`),
        }
        : null,
  },
  // The agents category (agent_view.ts), beside Lighthouse 13.3's Agentic Browsing.
  {
    id: "webmcp_tools",
    impact: 0,
    effort: "low",
    category: "agents",
    severity: "info",
    title: "WebMCP tools registered",
    detects: "The page registers WebMCP tools (navigator/document.modelContext registerTool or " +
      "provideContext) that browsing agents can call: listed, not judged.",
    scope: "render",
    sample: "dom",
    evaluate: ({ result: r }) =>
      r.webmcp && r.webmcp.tools.length > 0
        ? {
          url: r.url,
          count: r.webmcp.tools.length,
          tools: r.webmcp.tools.slice(0, LIST).map((t) => t.name ?? "(no name)"),
          native: r.webmcp.native,
        }
        : null,
  },
  {
    id: "webmcp_tool_invalid",
    impact: 1,
    effort: "low",
    category: "agents",
    severity: "warning",
    title: "Invalid WebMCP tool",
    detects: "A registered WebMCP tool lacks a valid name, a description or an execute " +
      'function, or its inputSchema is not a JSON Schema of type "object" (Lighthouse ' +
      "Agentic Browsing: tool registration and schema validity).",
    scope: "render",
    sample: "dom",
    applies: (p) => (p.result.webmcp?.tools.length ?? 0) > 0,
    evaluate: ({ result: r }) => {
      const bad = (r.webmcp?.tools ?? []).map((t) => ({ t, p: webMcpToolProblems(t) }))
        .filter((x) => x.p.length > 0);
      const problems = bad.slice(0, LIST).map((x) =>
        `${x.t.name ?? "(no name)"}: ${x.p.join(", ")}`
      );
      return problems.length > 0 ? { url: r.url, count: bad.length, problems } : null;
    },
  },
  {
    id: "agent_accessibility",
    impact: 2,
    effort: "medium",
    category: "agents",
    severity: "warning",
    title: "Controls agents cannot identify",
    detects: "axe-core finds controls without an accessible name, invalid roles or ARIA, a " +
      "broken tree or hidden focusable content: what Lighthouse's Agentic Browsing reads.",
    scope: "render",
    sample: "dom",
    applies: (p) => Array.isArray(p.result.agentA11y),
    evaluate: ({ result: r }) => {
      const v = r.agentA11y ?? [];
      return v.length > 0
        ? {
          url: r.url,
          count: v.reduce((n, x) => n + x.count, 0),
          rules: v.slice(0, LIST).map((x) => `${x.rule} (${x.count}): ${x.targets.join(", ")}`),
        }
        : null;
    },
  },
];

export const RENDER_CHECKS_BY_ID: ReadonlyMap<string, RenderCheck> = new Map(
  RENDER_CHECKS.map((c) => [c.id, c]),
);

/** One fired check on one page. */
export interface RenderFinding {
  check: RenderCheck;
  evidence: Evidence;
}

/**
 * Runs the checks that apply to this page (lab checks only when it was a lab render): the ids
 * it was eligible for (denominators of the score) and the findings.
 */
export function evaluateRenderedPage(
  p: RenderedPageContext,
): { eligible: string[]; findings: RenderFinding[] } {
  const eligible: string[] = [];
  const findings: RenderFinding[] = [];
  for (const check of RENDER_CHECKS) {
    if (check.sample === "lab" && p.result.lab === null) continue;
    if (check.applies && !check.applies(p)) continue;
    eligible.push(check.id);
    const evidence = check.evaluate(p);
    if (evidence !== null) findings.push({ check, evidence });
  }
  return { eligible, findings };
}
