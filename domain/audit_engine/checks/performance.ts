/**
 * Performance: what raw HTTP and HTML can measure without a browser (server response time,
 * document size and compression, render-blocking scripts, DOM size, unsized images). Lab metrics
 * (LCP, CLS, INP, TBT) need rendering and are not measured.
 *
 * @module
 */
import type { Check, ItemGroup, SiteFacts, SiteOutcome } from "../types.ts";

const MB = 1024 * 1024;

function ttfbOutcome(s: SiteFacts, threshold: number, over: ItemGroup): SiteOutcome | null {
  if (s.ttfb.pages === 0) return null;
  const bad = s.ttfb.medianMs > threshold;
  // Site-level (median): affected_count is the number of pages over the threshold.
  return bad
    ? { eligible: 1, affected: Math.max(1, over.count), items: over.items }
    : { eligible: 1, affected: 0 };
}

export const performanceChecks: Check[] = [
  {
    id: "slow_ttfb",
    category: "performance",
    severity: "warning",
    impact: 2,
    effort: "high",
    title: "Slow server response (median TTFB over 800 ms)",
    detects: "Median time to first byte of HTML pages above 800 ms.",
    scope: "site",
    evaluate: (s) => {
      const very = ttfbOutcome(s, 1800, s.ttfb.over1800);
      if (very && very.affected > 0) return { eligible: 1, affected: 0 }; // reported as very_slow
      return ttfbOutcome(s, 800, s.ttfb.over800);
    },
  },
  {
    id: "very_slow_ttfb",
    category: "performance",
    severity: "critical",
    impact: 3,
    effort: "high",
    title: "Very slow server response (median TTFB over 1.8 s)",
    detects: "Median time to first byte of HTML pages above 1,800 ms.",
    scope: "site",
    evaluate: (s) => ttfbOutcome(s, 1800, s.ttfb.over1800),
  },
  {
    id: "html_too_large",
    category: "performance",
    severity: "warning",
    impact: 3,
    effort: "medium",
    title: "HTML over 2 MB",
    detects: "Uncompressed HTML above 2 MB; Google stops reading there.",
    scope: "page",
    eligibility: "html",
    evaluate: (p) => p.facts.bytes > 2 * MB && { bytes: p.facts.bytes },
  },
  {
    id: "html_large",
    category: "performance",
    severity: "info",
    impact: 1,
    effort: "medium",
    title: "HTML over 1 MB",
    detects: "Uncompressed HTML between 1 and 2 MB.",
    scope: "page",
    eligibility: "html",
    evaluate: (p) => p.facts.bytes > MB && p.facts.bytes <= 2 * MB && { bytes: p.facts.bytes },
  },
  {
    id: "no_text_compression",
    category: "performance",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "HTML served without compression",
    detects: "HTML over 1 KB with no gzip, br, zstd or deflate Content-Encoding.",
    scope: "page",
    eligibility: "html",
    evaluate: (p) =>
      p.facts.bytes > 1024 &&
      !/\b(gzip|br|zstd|deflate)\b/i.test(p.headers.get("content-encoding") ?? "") &&
      { bytes: p.facts.bytes, content_encoding: p.headers.get("content-encoding") },
  },
  {
    id: "render_blocking_scripts",
    category: "performance",
    severity: "info",
    impact: 1,
    effort: "medium",
    title: "Render-blocking scripts in <head>",
    detects: "External scripts in <head> without async, defer or type=module.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) =>
      p.facts.renderBlockingScripts > 0 &&
      { count: p.facts.renderBlockingScripts, scripts: p.facts.samples.renderBlocking },
  },
  {
    id: "unsized_images",
    category: "performance",
    severity: "info",
    impact: 1,
    effort: "low",
    title: "Images without width and height",
    detects: "<img> lacking width or height attributes (layout-shift risk).",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) =>
      p.facts.imgUnsized > 0 && { count: p.facts.imgUnsized, images: p.facts.samples.imgUnsized },
  },
  {
    id: "dom_size",
    category: "performance",
    severity: "info",
    impact: 1,
    effort: "high",
    title: "Large or deeply nested DOM",
    detects: "Over 1,500 elements or nesting depth of 30 or more.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) =>
      (p.facts.elementCount > 1500 || p.facts.maxDepth >= 30) &&
      { elements: p.facts.elementCount, max_depth: p.facts.maxDepth },
  },
];
