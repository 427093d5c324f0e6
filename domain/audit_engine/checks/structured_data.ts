/**
 * Structured data validation: JSON-LD checked against the schema.org vocabulary and Google's
 * required properties for the common rich results (the rules and their sources are in
 * ../json_ld.ts; blocks that do not parse are structured_data_invalid's).
 *
 * @module
 */
import type { PageCheck } from "../types.ts";

export const structuredDataChecks: PageCheck[] = [
  {
    id: "rich_result_invalid",
    category: "structure",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "Structured data misses properties Google requires for rich results",
    detects: "A JSON-LD Product, BreadcrumbList, FAQPage or LocalBusiness (or subtype) lacking a " +
      "property Google's rich-result documentation marks required, or with one of the wrong " +
      "shape; evidence: block, type, JSON path, missing and invalid property paths.",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => p.facts.jsonLd.richEntities > 0,
    evaluate: (p) => p.facts.jsonLd.richIssues,
  },
  {
    id: "schema_type_unknown",
    category: "structure",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "JSON-LD types that are not schema.org types",
    detects: "A JSON-LD @type that is no schema.org type (a typo such as Prodcut, a wrong case), " +
      "or a @context that does not name schema.org; evidence: block, JSON path, the type or " +
      "context, a suggested type.",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => p.facts.jsonLdCount > p.facts.jsonLdInvalid,
    evaluate: (p) => p.facts.jsonLd.unknown,
  },
];
