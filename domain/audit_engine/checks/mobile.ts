/**
 * Mobile: what the HTML says about small screens. Font sizes, tap targets and content width need
 * rendering and are not measured (never reported as passed).
 *
 * @module
 */
import type { Check, PageContext } from "../types.ts";

function viewportParts(p: PageContext): Map<string, string> {
  const m = new Map<string, string>();
  for (const part of (p.facts.viewport ?? "").split(/[,;]/)) {
    const i = part.indexOf("=");
    if (i < 0) continue;
    m.set(part.slice(0, i).trim().toLowerCase(), part.slice(i + 1).trim().toLowerCase());
  }
  return m;
}

const hasViewport = (p: PageContext) => p.facts.viewportCount > 0 && !!p.facts.viewport?.trim();

export const mobileChecks: Check[] = [
  {
    id: "viewport_missing",
    category: "mobile",
    severity: "critical",
    impact: 3,
    effort: "low",
    title: "No viewport meta tag",
    detects: "No <meta name=viewport>, or an empty one: phones render a desktop-width page.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => !hasViewport(p) && { viewport: p.facts.viewport },
  },
  {
    id: "viewport_not_responsive",
    category: "mobile",
    severity: "warning",
    impact: 3,
    effort: "low",
    title: "Viewport is not responsive",
    detects: "Viewport without width=device-width or initial-scale, or with a fixed pixel width.",
    scope: "page",
    eligibility: "indexable",
    applies: hasViewport,
    evaluate: (p) => {
      const v = viewportParts(p);
      const width = v.get("width");
      const bad = (width !== undefined && /^\d/.test(width)) ||
        (width !== "device-width" && !v.has("initial-scale"));
      return bad && { viewport: p.facts.viewport };
    },
  },
  {
    id: "zoom_disabled",
    category: "mobile",
    severity: "warning",
    impact: 1,
    effort: "low",
    title: "Pinch-zoom disabled",
    detects: "user-scalable=no/0 or maximum-scale below 5 in the viewport.",
    scope: "page",
    eligibility: "indexable",
    applies: hasViewport,
    evaluate: (p) => {
      const v = viewportParts(p);
      const us = v.get("user-scalable");
      const max = v.get("maximum-scale");
      const bad = us === "no" || us === "0" || (max !== undefined && Number.parseFloat(max) < 5);
      return bad && { viewport: p.facts.viewport };
    },
  },
  {
    id: "legacy_plugins",
    category: "mobile",
    severity: "info",
    impact: 2,
    effort: "high",
    title: "Plugin content (object, embed, applet)",
    detects: "Plugin-based content most mobile browsers cannot show.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) =>
      p.facts.plugins > 0 && { count: p.facts.plugins, elements: p.facts.samples.plugins },
  },
];
