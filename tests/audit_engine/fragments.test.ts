/**
 * broken_fragment (issue 32): the anchors and fragment links one parse collects
 * (facts/fragments.ts), and the site-wide join through redirects, with the per-page caps that
 * keep memory bounded (a page with more anchors than the cap is not judged against); where a
 * page's anchor set is stored (its first link chunk, or a key of its own) and read back.
 */
import assert from "node:assert/strict";
import { extractPageFacts } from "../../domain/audit_engine/facts/extract.ts";
import {
  anchorHash,
  MAX_ANCHORS,
  MAX_FRAGMENT_LINKS,
} from "../../domain/audit_engine/facts/fragments.ts";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import {
  addRenderedAnchors,
  anchorSet,
  readAnchorSets,
  writeFragmentFacts,
} from "../../domain/audit_engine/crawl/anchors.ts";
import {
  LINK_CHUNK_BYTES,
  urlHash,
  WriteBatch,
  writeLinks,
} from "../../domain/audit_engine/crawl/store.ts";
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

/** `kv`, with each atomic set counted by its key's family in `sets`. */
function countingSets(kv: Deno.Kv, sets: Map<string, number>): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop !== "atomic") return typeof value === "function" ? value.bind(target) : value;
      return () => {
        const op = target.atomic();
        const set = op.set.bind(op);
        op.set = (key: Deno.KvKey, v: unknown, o?: { expireIn?: number }) => {
          sets.set(String(key[0]), (sets.get(String(key[0])) ?? 0) + 1);
          return set(key, v, o);
        };
        return op;
      };
    },
  });
}

Deno.test("a page with links carries its anchors in its first link chunk (no key of their own); a page without links, or a chunk written before they moved, keeps the key; the join reads both", async () => {
  const base = await Deno.openKv(":memory:");
  const sets = new Map<string, number>();
  const kv = countingSets(base, sets);
  const A = "aud_carry";
  try {
    const batch = new WriteBatch(kv);
    const linked = facts('<h2 id="one">s</h2><a href="/other">o</a><a href="#one">x</a>');
    const carried = writeLinks(batch, A, "https://s.test/linked", linked, anchorSet(linked));
    assert.equal(carried, true);
    writeFragmentFacts(batch, A, "https://s.test/linked", linked, carried);
    const alone = facts('<h2 id="two">s</h2>');
    const none = writeLinks(batch, A, "https://s.test/alone", alone, anchorSet(alone));
    assert.equal(none, false);
    writeFragmentFacts(batch, A, "https://s.test/alone", alone, none);
    // As a crawl in flight across the deploy stored it: a chunk without the set, the set apart.
    const old = facts('<h2 id="three">s</h2><a href="/other">o</a>');
    writeLinks(batch, A, "https://s.test/old", old);
    writeFragmentFacts(batch, A, "https://s.test/old", old);
    await batch.flush();
    // Three pages, two with links: two anchor keys, not three.
    assert.equal(sets.get("audit_anchors"), 2);
    assert.equal((await base.get(keys.auditAnchors(A, "https://s.test/linked"))).value, null);
    const read = await readAnchorSets(kv, A, [
      "https://s.test/linked",
      "https://s.test/alone",
      "https://s.test/old",
      "https://s.test/never-crawled",
    ]);
    assert.deepEqual(read.map((r) => r?.set ?? null), [
      { h: [anchorHash("one")], more: false },
      { h: [anchorHash("two")], more: false },
      { h: [anchorHash("three")], more: false },
      null,
    ]);
    // The link pass reads the carrying chunk's links as before.
    const chunk = (await base.get(keys.auditLinks(A, "https://s.test/linked", 0))).value as {
      t: number[];
      f: number;
    };
    assert.deepEqual(chunk.t, [urlHash("https://s.test/other")]);
    assert.equal(chunk.f, 1);
  } finally {
    base.close();
  }
});

Deno.test("rendered anchors grow a carried set in its chunk, and move it to its own key when the chunk would pass KV's value limit", async () => {
  const kv = await Deno.openKv(":memory:");
  const A = "aud_carry_render";
  try {
    // A page of long-anchored links fills its first chunk to LINK_CHUNK_BYTES.
    const full = facts(
      '<h2 id="static">s</h2>' +
        Array.from({ length: 480 }, (_, i) => `<a href="/p${i}">${"w".repeat(99)}${i}</a>`)
          .join(""),
    );
    assert.ok(full.linkAnchors.join("").length * 2 > LINK_CHUNK_BYTES);
    const small = facts('<h2 id="static">s</h2><a href="/x">x</a>');
    const batch = new WriteBatch(kv);
    for (
      const [url, f] of [["https://s.test/full", full], ["https://s.test/small", small]] as const
    ) {
      writeFragmentFacts(batch, A, url, f, writeLinks(batch, A, url, f, anchorSet(f)));
    }
    await batch.flush();
    const many = facts(
      Array.from({ length: MAX_ANCHORS }, (_, i) => `<i id="r${i}"></i>`).join(""),
    );
    const b2 = new WriteBatch(kv); // throws at `set` on a value past KV's limit
    await addRenderedAnchors(kv, b2, A, [
      { url: "https://s.test/full", facts: many },
      { url: "https://s.test/small", facts: facts('<div id="tab-2">by a script</div>') },
    ]);
    await b2.flush();
    const [grownFull, grownSmall] = await readAnchorSets(kv, A, [
      "https://s.test/full",
      "https://s.test/small",
    ]);
    // The full page's set moved (its chunk carries none), capped as before; the small one stayed.
    assert.equal(grownFull!.chunk, null);
    assert.equal(grownFull!.set.h.length, MAX_ANCHORS);
    assert.equal(grownFull!.set.h[0], anchorHash("static"));
    assert.equal(grownFull!.set.more, true);
    const fullChunk = (await kv.get(keys.auditLinks(A, "https://s.test/full", 0))).value;
    assert.equal((fullChunk as { h?: unknown }).h, undefined);
    assert.notEqual(grownSmall!.chunk, null);
    assert.deepEqual(grownSmall!.set, { h: ["static", "tab-2"].map(anchorHash), more: false });
    assert.equal((await kv.get(keys.auditAnchors(A, "https://s.test/small"))).value, null);
  } finally {
    kv.close();
  }
});
