/**
 * Checks own their facts (issue 30): each family in FACT_COLLECTORS declares its facts and their
 * starting values, and a page's facts are exactly the document's plus every family's, each field
 * owned by one of them, fresh per page; the incremental crawl's fingerprint keeps the format
 * stored audits were written with until a family raises its own version.
 */
import assert from "node:assert/strict";
import { extractPageFacts } from "../../domain/audit_engine/facts/extract.ts";
import { initDocumentFacts } from "../../domain/audit_engine/facts/document.ts";
import type { FactCollector } from "../../domain/audit_engine/facts/collector.ts";
import { FACT_COLLECTORS } from "../../domain/audit_engine/page_facts.ts";
import {
  factsVersion,
  REUSE_VERSION,
  reuseFingerprint,
} from "../../domain/audit_engine/crawl/reuse.ts";

const families = FACT_COLLECTORS as readonly FactCollector[];

Deno.test("fact families: every field has one owner, and a page's facts are theirs", () => {
  const owner = new Map<string, string>();
  const sampleOwner = new Map<string, string>();
  const claim = (m: Map<string, string>, key: string, who: string) => {
    assert.equal(m.get(key), undefined, `${key} declared by ${m.get(key)} and ${who}`);
    m.set(key, who);
  };
  for (const k of Object.keys(initDocumentFacts())) claim(owner, k, "document");
  for (const c of families) {
    const init = c.init() as Record<string, unknown>;
    for (const [k, v] of Object.entries(init)) {
      if (k === "samples") {
        for (const s of Object.keys(v as object)) claim(sampleOwner, s, c.id);
      } else claim(owner, k, c.id);
    }
  }
  assert.ok(owner.size > 50 && sampleOwner.size > 5, "the families declare the page's facts");
  const f = extractPageFacts("<title>t</title><p>x</p>", new URL("https://s.test/"), "s.test");
  assert.deepEqual(Object.keys(f).sort(), [...owner.keys(), "samples"].sort());
  assert.deepEqual(Object.keys(f.samples).sort(), [...sampleOwner.keys()].sort());
});

Deno.test("fact families: each page starts from fresh values (nothing leaks between pages)", () => {
  const u = new URL("https://s.test/a");
  const a = extractPageFacts(
    '<html lang="en"><title>A</title><a href="/x">here</a><img src="/i.png"><form action="http://s.test/f"></form><object data="/o.swf"></object><div id="root"></div>',
    u,
    "s.test",
  );
  const snapshot = structuredClone(a);
  const b = extractPageFacts("<p>plain</p>", u, "s.test");
  assert.deepEqual(a, snapshot, "the second page's parse left the first page's facts alone");
  assert.equal(b.title, null);
  assert.deepEqual([b.links, b.insecureForms, b.resourceUrls, b.anchors], [[], [], [], []]);
  assert.deepEqual([b.imgCount, b.plugins, b.appRoot, b.htmlLang], [0, 0, false, null]);
  assert.deepEqual(Object.values(b.samples).flat(), []);
  // The first page's facts were really collected, so the comparison above says something.
  assert.deepEqual([a.links, a.insecureForms, a.appRoot], [["https://s.test/x"], [
    "http://s.test/f",
  ], true]);
  assert.deepEqual([a.samples.genericLinks.length, a.samples.imgNoAlt, a.samples.plugins], [1, [
    "/i.png",
  ], ["object /o.swf"]]);
  // Families' arrays are never shared between pages.
  for (const c of families) {
    const [x, y] = [c.init(), c.init()] as Record<string, unknown>[];
    for (const k of Object.keys(x)) {
      if (typeof x[k] === "object" && x[k] !== null) assert.notEqual(x[k], y[k], `${c.id}.${k}`);
    }
  }
});

Deno.test("fact families: a family's own version changes the reuse fingerprint, none keeps it", () => {
  const input = { startUrl: "https://s.test/", userAgent: undefined };
  const caps = { linksPerPage: 1000, resources: 500 };
  // The format completed audits stored their fingerprint in (before families had versions).
  assert.equal(
    reuseFingerprint(input, caps),
    JSON.stringify([REUSE_VERSION, "https://s.test", "serpwright", 1000, true]),
  );
  assert.equal(factsVersion(), REUSE_VERSION);
  const bumped = families.map((c) => c.id === "forms" ? { id: c.id, version: 1 } : c);
  assert.equal(factsVersion(bumped), `${REUSE_VERSION} forms@1`);
  assert.notEqual(factsVersion(bumped), factsVersion());
  // A family added later must have a version, or stored facts without its fields would be reused.
  const first = [
    "head",
    "headings",
    "links",
    "images",
    "subresources",
    "scripts",
    "forms",
    "plugins",
    "app_root",
    "fragments",
  ];
  for (const c of families) {
    assert.ok(first.includes(c.id) || (c.version ?? 0) > 0, `${c.id} needs a version (from 1)`);
  }
});
