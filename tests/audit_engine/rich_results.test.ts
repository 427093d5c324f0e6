/**
 * The JSON-LD validator's rules (domain/audit_engine/json_ld.ts): Google's required rich-result
 * properties per type, schema.org type names, contexts, paths, and the bounds on work.
 */
import assert from "node:assert/strict";
import {
  emptyJsonLdFindings,
  inspectJsonLd,
  type JsonLdFindings,
  MAX_FINDINGS,
  MAX_NODES,
  suggest,
} from "../../domain/audit_engine/json_ld.ts";
import { extractPageFacts } from "../../domain/audit_engine/facts/extract.ts";
import { SCHEMA_ORG_TYPES } from "../../domain/audit_engine/schema_org_types.ts";
import { auditSite } from "./audit_site.ts";
import { base, ldScript } from "./check_cases.ts";
import type { Route } from "../helpers/sites.ts";

const CTX = "https://schema.org";

function inspect(...blocks: unknown[]): JsonLdFindings {
  const out = emptyJsonLdFindings();
  blocks.forEach((b, i) => inspectJsonLd(b, i + 1, out));
  return out;
}

/** The one rich-result issue of a block (asserts there is exactly one). */
function issue(data: unknown) {
  const f = inspect(data);
  assert.equal(f.richIssues.length, 1, JSON.stringify(f.richIssues));
  return f.richIssues[0];
}

function clean(data: unknown): void {
  const f = inspect(data);
  assert.deepEqual(f.richIssues, []);
  assert.deepEqual(f.unknown, []);
  assert.ok(f.richEntities > 0, "the block has an entity the rules judge");
}

const offer = { "@type": "Offer", price: "19.99", priceCurrency: "EUR" };

Deno.test("Product: name and one of offers/review/aggregateRating; Offer price as a number", () => {
  clean({ "@context": CTX, "@type": "Product", name: "Mug", offers: offer });
  clean({ "@context": CTX, "@type": "Product", name: "Mug", offers: { ...offer, price: 20 } });
  clean({
    "@context": CTX,
    "@type": "Product",
    name: "Mug",
    aggregateRating: { "@type": "AggregateRating", ratingValue: 4.5, reviewCount: 12 },
  });
  clean({
    "@context": CTX,
    "@type": "Product",
    name: "Mug",
    review: {
      "@type": "Review",
      author: { "@type": "Person", name: "Ann" },
      reviewRating: { "@type": "Rating", ratingValue: 5 },
    },
  });
  // The price may sit in a priceSpecification (one of a list is enough).
  clean({
    "@context": CTX,
    "@type": "Product",
    name: "Mug",
    offers: {
      "@type": "Offer",
      priceSpecification: [{ "@type": "UnitPriceSpecification", price: 3, priceCurrency: "EUR" }],
    },
  });

  const none = issue({ "@context": CTX, "@type": "Product", description: "no name, no offer" });
  assert.deepEqual(none, {
    block: 1,
    type: "Product",
    path: "$",
    missing: ["$.name", "$.offers|review|aggregateRating"],
    invalid: [],
  });
  const noPrice = issue({
    "@context": CTX,
    "@graph": [
      { "@type": "WebSite", name: "Shop", url: "https://s.test/" },
      {
        "@type": "Product",
        name: "Mug",
        offers: [offer, { "@type": "Offer", priceCurrency: "EUR" }],
      },
    ],
  });
  assert.equal(noPrice.path, "$.@graph[1]");
  assert.deepEqual(noPrice.missing, ["$.@graph[1].offers[1].price"]);
  const badPrice = issue({
    "@context": CTX,
    "@type": "Product",
    name: "Mug",
    offers: { "@type": "Offer", price: "$19.99" },
  });
  assert.deepEqual(badPrice.invalid, ["$.offers.price"]);
  assert.deepEqual(badPrice.missing, []);
});

Deno.test("Product: AggregateOffer, AggregateRating and Review parts", () => {
  const agg = issue({
    "@context": CTX,
    "@type": "Product",
    name: "Mug",
    offers: { "@type": "AggregateOffer", lowPrice: "cheap", highPrice: 9 },
  });
  assert.deepEqual(agg.missing, ["$.offers.priceCurrency"]);
  assert.deepEqual(agg.invalid, ["$.offers.lowPrice"]);
  const rating = issue({
    "@context": CTX,
    "@type": "Product",
    name: "Mug",
    aggregateRating: { "@type": "AggregateRating", ratingValue: 4 },
    review: [{ "@type": "Review", reviewRating: { "@type": "Rating" } }],
  });
  assert.deepEqual(rating.missing, [
    "$.aggregateRating.ratingCount|reviewCount",
    "$.review[0].author",
    "$.review[0].reviewRating.ratingValue",
  ]);
  // offers given as a plain string is not an Offer.
  assert.deepEqual(
    issue({ "@context": CTX, "@type": "Product", name: "Mug", offers: "19.99" }).invalid,
    ["$.offers"],
  );
});

Deno.test("BreadcrumbList: position, name and item on every ListItem but the last", () => {
  const crumb = (position: unknown, name: string, item?: unknown) => ({
    "@type": "ListItem",
    position,
    name,
    ...(item === undefined ? {} : { item }),
  });
  clean({
    "@context": CTX,
    "@type": "BreadcrumbList",
    itemListElement: [
      crumb(1, "Home", "https://s.test/"),
      crumb(2, "Shop", { "@id": "https://s.test/shop", name: "Shop" }),
      crumb(3, "Mug"), // the last crumb needs no item
    ],
  });
  // Last by position, not array order; "2" as a string is an integer too.
  clean({
    "@context": CTX,
    "@type": "BreadcrumbList",
    itemListElement: [crumb("2", "Mug"), crumb(1, "Home", "https://s.test/")],
  });
  const bad = issue({
    "@context": CTX,
    "@type": "BreadcrumbList",
    itemListElement: [
      { "@type": "ListItem", item: "https://s.test/" },
      crumb("second", "Shop", "https://s.test/shop"),
      crumb(3, "Mug", { name: "Mug" }),
    ],
  });
  assert.deepEqual(bad.missing, [
    "$.itemListElement[0].position",
    "$.itemListElement[0].name",
    "$.itemListElement[2].item.@id",
  ]);
  assert.deepEqual(bad.invalid, ["$.itemListElement[1].position"]);
  // With unusable positions the last crumb is the last in the array; the first one needs an item.
  assert.deepEqual(issue({ "@context": CTX, "@type": "BreadcrumbList" }).missing, [
    "$.itemListElement",
  ]);
});

Deno.test("FAQPage: Questions with name and acceptedAnswer.text", () => {
  const q = (name: string, text: string) => ({
    "@type": "Question",
    name,
    acceptedAnswer: { "@type": "Answer", text },
  });
  clean({ "@context": CTX, "@type": "FAQPage", mainEntity: [q("Why?", "Because.")] });
  const bad = issue({
    "@context": CTX,
    "@type": "FAQPage",
    mainEntity: [
      q("Why?", "Because."),
      { "@type": "Question", name: "How?" },
      { "@type": "Question", acceptedAnswer: { "@type": "Answer", text: "  " } },
      { "@type": "Answer", text: "not a question" },
    ],
  });
  assert.deepEqual(bad.missing, [
    "$.mainEntity[1].acceptedAnswer",
    "$.mainEntity[2].name",
    "$.mainEntity[2].acceptedAnswer.text",
  ]);
  assert.deepEqual(bad.invalid, ["$.mainEntity[3].@type"]);
});

Deno.test("LocalBusiness and its subtypes: name and address", () => {
  const address = { "@type": "PostalAddress", streetAddress: "1 Main St" };
  clean({ "@context": CTX, "@type": "Restaurant", name: "Café", address });
  clean({ "@context": CTX, "@type": ["LocalBusiness", "Store"], name: "Shop", address });
  const bad = issue({ "@context": CTX, "@type": "https://schema.org/Dentist", name: "Dr. Tooth" });
  assert.equal(bad.type, "Dentist");
  assert.deepEqual(bad.missing, ["$.address"]);
  assert.deepEqual(issue({ "@context": CTX, "@type": "Store", name: 7, address: 3 }).invalid, [
    "$.address",
  ]);
});

Deno.test("Article and Organization: Google requires nothing, so nothing is reported", () => {
  const f = inspect(
    { "@context": CTX, "@type": "Article" },
    { "@context": CTX, "@type": "NewsArticle", headline: "h" },
    { "@context": CTX, "@type": "BlogPosting" },
    { "@context": CTX, "@type": "Organization" },
    { "@context": CTX, "@type": "Corporation" },
  );
  assert.deepEqual(f.richIssues, []);
  assert.equal(f.richEntities, 0);
  assert.equal(f.typedNodes, 5);
});

Deno.test("entities: @graph members and mainEntity are judged, references and nested parts not", () => {
  // A Product as a page's mainEntity is judged; an Organization's nested Product is not (it is
  // not an entity of its own), and a reference node has its definition elsewhere.
  const f = inspect({
    "@context": CTX,
    "@type": "ItemPage",
    mainEntity: { "@type": "Product", name: "Mug" },
    publisher: {
      "@type": "Organization",
      makesOffer: { "@type": "Offer", itemOffered: { "@type": "Product", name: "Cup" } },
    },
  }, {
    "@context": CTX,
    "@graph": [{ "@id": "#p", "@type": "Product" }, {
      "@type": "Product",
      name: "Jug",
      offers: { "@id": "#offer" },
    }],
  });
  assert.deepEqual(f.richIssues.map((i) => [i.block, i.path, i.missing]), [
    [1, "$.mainEntity", ["$.mainEntity.offers|review|aggregateRating"]],
  ]);
  assert.equal(f.richIssueCount, 1);
  assert.equal(f.richEntities, 2);
  // A top-level array: each member is an entity.
  const arr = inspect([{ "@context": CTX, "@type": "Product", name: "A", offers: offer }, {
    "@context": CTX,
    "@type": "LocalBusiness",
    name: "B",
  }]);
  assert.deepEqual(arr.richIssues.map((i) => i.path), ["$[1]"]);
});

Deno.test("schema_type_unknown: typos, wrong case and foreign contexts; other vocabularies pass", () => {
  const f = inspect({
    "@context": CTX,
    "@graph": [
      { "@type": "Prodcut", name: "Mug" },
      { "@type": ["Organization", "localbusiness"], name: "Shop" },
      { "@type": "http://schema.org/Persn" },
      // Other vocabularies' types and JSON-LD value types are not schema.org's to judge.
      {
        "@type": ["Product", "gs1:Product", "https://example.test/Thing"],
        name: "x",
        offers: offer,
      },
      { "@type": "Event", startDate: { "@type": "xsd:date", "@value": "2024-01-01" } },
      { "@type": "WebPage", author: { "@type": "Peron", name: "Ann" } },
    ],
  }, { "@context": "https://example.test/vocab", "@type": "Prodcut" });
  assert.deepEqual(f.unknown.map((u) => [u.block, u.path, u.kind, u.type, u.suggestion]), [
    [1, "$.@graph[0]", "type", "Prodcut", "Product"],
    [1, "$.@graph[1]", "type", "localbusiness", "LocalBusiness"],
    [1, "$.@graph[2]", "type", "Persn", "Person"],
    [1, "$.@graph[5].author", "type", "Peron", "Person"],
    [2, "$", "context", '"https://example.test/vocab"', ""],
  ]);
  assert.equal(f.unknownCount, 5);
  // Contexts naming schema.org in any form are fine.
  for (
    const ctx of [
      "http://schema.org/",
      "https://schema.org/docs/jsonldcontext.json",
      ["https://schema.org", { ex: "https://example.test/" }],
      { "@vocab": "https://schema.org/" },
    ]
  ) {
    assert.deepEqual(inspect({ "@context": ctx, "@type": "Thing" }).unknown, [], String(ctx));
  }
  // Without a context bare names are not judged (structured_data_invalid reports the block).
  assert.deepEqual(inspect({ "@type": "Prodcut" }).unknown, []);
  assert.equal(suggest("Xyzzyplugh"), "");
  assert.equal(suggest("BreadCrumbList"), "BreadcrumbList");
});

Deno.test("the schema.org table has the vocabulary's types and none of the typos", () => {
  for (const t of ["Thing", "Product", "FAQPage", "Restaurant", "3DModel", "Text", "URL"]) {
    assert.ok(SCHEMA_ORG_TYPES.has(t), t);
  }
  for (const t of ["Prodcut", "product", "Faqpage", "schema:Thing"]) {
    assert.ok(!SCHEMA_ORG_TYPES.has(t), t);
  }
  assert.ok(SCHEMA_ORG_TYPES.size > 800);
});

Deno.test("bounds: nodes examined and findings kept per page are capped, counts stay exact", () => {
  const products = Array.from({ length: 50 }, () => ({ "@type": "Product", name: "x" }));
  const f = inspect({ "@context": CTX, "@graph": products });
  assert.equal(f.richIssues.length, MAX_FINDINGS);
  assert.equal(f.richIssueCount, 50);
  const many = Array.from({ length: MAX_NODES * 2 }, () => ({ "@type": "Thing" }));
  const g = inspect({ "@context": CTX, "@graph": many });
  assert.equal(g.nodes, MAX_NODES);
  // Deep nesting stops at the depth bound instead of recursing without end.
  let deep: Record<string, unknown> = { "@type": "Prodcut" };
  for (let i = 0; i < 5_000; i++) deep = { "@type": "Thing", about: deep };
  const h = inspect({ "@context": CTX, ...deep });
  assert.equal(h.unknownCount, 0);
});

Deno.test("page facts: every ld+json block is inspected, numbered in page order", () => {
  const block = (d: unknown) => `<script type="application/ld+json">${JSON.stringify(d)}</script>`;
  const f = extractPageFacts(
    `<html><head>${
      block({ "@context": CTX, "@type": "WebPage" })
    }<script type="application/ld+json">{oops</script>${
      block({ "@context": CTX, "@type": "FAQPage", mainEntity: { "@type": "Question" } })
    }</head><body><p>x</p></body></html>`,
    new URL("https://s.test/"),
    "s.test",
  );
  assert.equal(f.jsonLdCount, 3);
  assert.equal(f.jsonLdInvalid, 1);
  assert.deepEqual(f.jsonLd.richIssues, [{
    block: 3,
    type: "FAQPage",
    path: "$",
    missing: ["$.mainEntity.name", "$.mainEntity.acceptedAnswer"],
    invalid: [],
  }]);
});

/** The routes that answer (base() maps a path to undefined for a 404). */
const served = (r: Record<string, Route | undefined>): Record<string, Route> =>
  Object.fromEntries(Object.entries(r).filter((e): e is [string, Route] => e[1] !== undefined));

Deno.test("an audit stores each finding with the page, block, type and JSON paths", async () => {
  const { findings, fired } = await auditSite((o) =>
    served(base(o, {
      "/a": {
        body: ldScript({
          "@context": CTX,
          "@graph": [
            { "@type": "Organization", name: "Shop" },
            { "@type": "Product", name: "Mug", offers: { "@type": "Offer", price: "$9" } },
            { "@type": "Prodcut", name: "Cup" },
          ],
        }),
      },
    }))
  );
  assert.equal(fired.get("rich_result_invalid"), 1);
  assert.equal(fired.get("schema_type_unknown"), 1);
  const [rich] = findings.get("rich_result_invalid")!;
  assert.match(String(rich.url), /\/a$/);
  // Block 2: the base page's own WebPage block comes first.
  assert.deepEqual(
    [rich.block, rich.type, rich.path, rich.missing, rich.invalid],
    [2, "Product", "$.@graph[1]", [], ["$.@graph[1].offers.price"]],
  );
  const [unknown] = findings.get("schema_type_unknown")!;
  assert.deepEqual([unknown.type, unknown.path, unknown.suggestion], [
    "Prodcut",
    "$.@graph[2]",
    "Product",
  ]);
});

Deno.test("bounds: unknown types are all counted, only the first ones kept with a suggestion", () => {
  const graph = Array.from({ length: MAX_NODES }, (_, i) => ({ "@type": `Unknwn${i}Typo` }));
  const f = inspect({ "@context": CTX, "@graph": graph });
  // The top-level object is one of the MAX_NODES objects examined.
  assert.equal(f.unknownCount, MAX_NODES - 1);
  assert.equal(f.unknown.length, MAX_FINDINGS);
  assert.deepEqual(f.unknown[0], {
    block: 1,
    path: "$.@graph[0]",
    type: "Unknwn0Typo",
    kind: "type",
    suggestion: "",
  });
});
