/**
 * broken_fragment (issue 32): the anchors and fragment links one parse collects
 * (facts/fragments.ts), and the site-wide join through redirects, with the per-page caps that
 * keep memory bounded (a page with more anchors than the cap is not judged against).
 */
import assert from "node:assert/strict";
import { extractPageFacts } from "../../domain/audit_engine/facts/extract.ts";
import {
  anchorHash,
  MAX_ANCHORS,
  MAX_FRAGMENT_LINKS,
} from "../../domain/audit_engine/facts/fragments.ts";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import { addRenderedAnchors, writeFragmentFacts } from "../../domain/audit_engine/crawl/anchors.ts";
import { WriteBatch } from "../../domain/audit_engine/crawl/store.ts";
import type { AnchorsValue } from "../../domain/audit_engine/types.ts";
import { keys } from "../../kv/keys.ts";
import { html, page, serveSite, TEST_CA } from "../helpers/sites.ts";

const facts = (body: string, url = "https://s.test/doc/page") =>
  extractPageFacts(`<!DOCTYPE html><html><body>${body}</body></html>`, new URL(url), "s.test");

Deno.test("anchors: id on any element and <a name>, hashed; empty ids are none", () => {
  const f = facts(
    '<h2 id="intro">x</h2><div id="">y</div><a name="old"></a><svg><g id="n1"/></svg>',
  );
  assert.deepEqual(f.anchors, ["intro", "old", "n1"].map(anchorHash));
  assert.equal(f.anchorsOverCap, false);
  const many = facts(
    Array.from({ length: MAX_ANCHORS + 5 }, (_, i) => `<i id="a${i}"></i>`).join(""),
  );
  assert.equal(many.anchors.length, MAX_ANCHORS);
  assert.equal(many.anchorsOverCap, true);
});

Deno.test("fragment links: same page, other pages, <base>; not #, #top, text fragments, #! or other sites", () => {
  const f = facts(
    '<a href="#faq">a</a><a href="#">b</a><a href="#TOP">c</a><a href="#!/route">d</a>' +
      '<a href="/guide#setup">e</a><a href="other#x:~:text=y">f</a><a href="#:~:text=z">g</a>' +
      '<a href="https://elsewhere.test/p#q">h</a><a href="/guide#setup">dup</a>' +
      '<a href="/guide?utm_source=x#caf%C3%A9">i</a>',
  );
  assert.deepEqual(
    f.fragmentTargets.map((t, i) => `${t} ${f.fragments[i]}`),
    [
      "https://s.test/doc/page faq",
      "https://s.test/guide setup",
      "https://s.test/doc/other x",
      "https://s.test/guide caf%C3%A9",
    ],
  );
  // A fragment-only link resolves against <base href>; an external base is not the site.
  const based = facts('<base href="/docs/"><a href="#part">p</a>');
  assert.deepEqual(based.fragmentTargets, ["https://s.test/docs/"]);
  const away = facts('<base href="https://elsewhere.test/"><a href="#part">p</a>');
  assert.deepEqual(away.fragmentTargets, []);
  const capped = facts(
    Array.from({ length: MAX_FRAGMENT_LINKS + 10 }, (_, i) => `<a href="#s${i}">s</a>`).join(""),
  );
  assert.equal(capped.fragments.length, MAX_FRAGMENT_LINKS);
});

Deno.test("the site-wide join: through redirects, decoded names, and a page past the anchor cap is not judged", async () => {
  const lots = Array.from({ length: MAX_ANCHORS + 1 }, (_, i) => `<i id="x${i}"></i>`).join("");
  const routes: Record<
    string,
    ReturnType<typeof html> | { status: number; headers: Record<string, string> }
  > = {
    "/": html(page({
      links: ["/moved#sec", "/moved#gone", "/target#caf%C3%A9", "/big#nowhere", "/big"],
    })),
    "/moved": { status: 301, headers: { location: "/target" } },
    "/target": html(page({ body: '<section id="sec"></section><p id="café"></p>' })),
    "/big": html(page({ body: lots })),
  };
  const site = serveSite((p) => routes[p], { tls: true });
  try {
    const { tallies, findings } = await runAuditDetailed({
      startUrl: site.url("/"),
      maxPages: 10,
      concurrency: 2,
      allowPrivate: true,
      timeoutMs: 3_000,
      ca: TEST_CA,
    });
    assert.deepEqual(tallies.get("broken_fragment"), { eligible: 1, affected: 1 });
    assert.deepEqual(findings.get("broken_fragment"), [{
      url: site.url("/"),
      link: site.url("/moved#gone"),
      target: site.url("/target"),
      missing_anchor: "gone",
    }]);
  } finally {
    await site.close();
  }
});

Deno.test("a rendered page's anchors join its stored set (an anchor a script writes is not missing)", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const batch = new WriteBatch(kv);
    const raw = facts('<h2 id="static">s</h2>');
    writeFragmentFacts(batch, "aud_r", "https://s.test/doc", raw);
    await batch.flush();
    const rendered = facts('<h2 id="static">s</h2><div id="tab-2">written by a script</div>');
    const b2 = new WriteBatch(kv);
    await addRenderedAnchors(kv, b2, "aud_r", [
      { url: "https://s.test/doc", facts: rendered },
      // Not an HTML page of the raw crawl: nothing is stored for it.
      { url: "https://s.test/never-crawled", facts: rendered },
    ]);
    await b2.flush();
    const stored = (await kv.get<AnchorsValue>(keys.auditAnchors("aud_r", "https://s.test/doc")))
      .value!;
    assert.deepEqual(stored, { h: ["static", "tab-2"].map(anchorHash), more: false });
    const none = await kv.get(keys.auditAnchors("aud_r", "https://s.test/never-crawled"));
    assert.equal(none.value, null);
  } finally {
    kv.close();
  }
});
