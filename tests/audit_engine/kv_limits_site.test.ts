/**
 * A site built to push the crawl's KV writes past Deno KV's limits (the audit runs on a KV behind
 * the strict limits guard, kv/limits_guard.ts): 300-character titles in a script other than
 * Latin on pages with ~1,400-character URLs (the duplicate index once put both in one key, past
 * 2 KiB), a page of 1,200 links with long non-Latin anchors (500 of them once made one value past
 * 64 KiB), and canonical, redirect and hreflang targets far longer than any stored URL.
 */
import assert from "node:assert/strict";
import { auditSite } from "./audit_site.ts";
import { html, page, robotsRoute, sitemapRoute } from "../helpers/sites.ts";
import {
  clipUtf8,
  FindingsWriter,
  LINKS_PER_CHUNK,
  WriteBatch,
  writeLinks,
} from "../../domain/audit_engine/crawl/store.ts";
import { keyBytes, KV_LIMITS, valueBytes } from "../../kv/limits_guard.ts";
import { keys } from "../../kv/keys.ts";
import { openTestKv } from "../helpers/kv.ts";

/** 300 characters, three UTF-8 bytes each. */
const TOKYO_TITLE = "東京".repeat(150);
const EMOJI_DESCRIPTION = "🗼".repeat(150); // 300 UTF-16 units, 600 UTF-8 bytes

/** A path of about `chars` characters once percent-encoded (each 東 is 9). */
function longPath(name: string, chars: number): string {
  return `/${name}/` + "東".repeat(Math.floor((chars - name.length - 2) / 9));
}

Deno.test("kv limits site: a 300-character non-Latin title on ~1,400-character URLs keeps its duplicate finding", async () => {
  const a = longPath("a", 1_370);
  const b = longPath("b", 1_370);
  const { fired, findings, origin, report } = await auditSite((o) => {
    const enc = (p: string) => new URL(p, o).pathname;
    return {
      "/": html(page({ key: "home", links: [a, b] })),
      [enc(a)]: html(page({ title: TOKYO_TITLE, description: EMOJI_DESCRIPTION, key: "a" })),
      [enc(b)]: html(page({ title: TOKYO_TITLE, description: EMOJI_DESCRIPTION, key: "b" })),
    };
  });
  const urlA = new URL(a, origin).href;
  const urlB = new URL(b, origin).href;
  // Canonical URLs are ASCII (percent-encoded), so a 1,500-character URL is 1,500 bytes.
  assert.ok(urlA.length > 1_350 && urlA.length <= 1_500 && /^[\x20-\x7e]+$/.test(urlA));
  assert.equal(report.pages_crawled, 3);
  assert.equal(fired.get("title_duplicate"), 2, `fired: ${[...fired.keys()]}`);
  const dups = findings.get("title_duplicate")!;
  // Evidence strings are clipped to 300 characters (store.ts clipEvidence); the pages are both.
  const named = dups.map((d) => String(d.url));
  assert.ok(named.some((u) => urlA.startsWith(u)) && named.some((u) => urlB.startsWith(u)));
  for (const d of dups) {
    assert.equal(d.title, TOKYO_TITLE, "the real title, not its digest");
    assert.equal(d.group_size, 2);
  }
  assert.equal(fired.get("meta_description_duplicate"), 2);
  assert.equal(findings.get("meta_description_duplicate")![0].description, EMOJI_DESCRIPTION);
});

Deno.test("kv limits site: 1,200 links with long non-Latin anchors are stored in chunks under 64 KiB", async () => {
  const anchor = "東京の技術的なSEOガイド".repeat(5); // 65 characters; the page keeps 60
  const links = Array.from({ length: 1_200 }, (_, i) => `/l/${i}`);
  const body = `<ul>${links.map((l) => `<li><a href="${l}">${anchor}</a></li>`).join("")}</ul>`;
  const { report, fired } = await auditSite(() => ({
    "/": html(page({ key: "home", body })),
    "/l/0": { status: 404, body: "gone" },
  }), { maxPages: 5 });
  assert.equal(report.pages_crawled, 5);
  assert.ok(fired.has("broken_internal_links"), `fired: ${[...fired.keys()]}`);
});

Deno.test("kv limits site: a sitemap of ~1,400-character URLs is stored in chunks under 64 KiB", async () => {
  const urls = (o: string) =>
    Array.from({ length: 80 }, (_, i) => `${o}/s/${i}/` + "q".repeat(1_390));
  const { report } = await auditSite((o) => ({
    "/robots.txt": robotsRoute(`User-agent: *\nDisallow:\nSitemap: ${o}/sitemap.xml\n`),
    "/sitemap.xml": sitemapRoute(urls(o)),
    "/": html(page({ key: "home" })),
  }), { maxPages: 100 });
  assert.equal(report.pages_crawled, 81, "the home page and every sitemap URL");
});

Deno.test("kv limits site: writeLinks chunks by size, clips anchors and keeps the followable split", async () => {
  const kv = await openTestKv();
  try {
    const batch = new WriteBatch(kv);
    const n = 1_300;
    const links = Array.from({ length: 1_000 }, (_, i) => `https://e.example/f/${i}`);
    const nofollowLinks = Array.from({ length: n - 1_000 }, (_, i) => `https://e.example/n/${i}`);
    const long = "ガ".repeat(250);
    writeLinks(batch, "aud_x", "https://e.example/", {
      links,
      nofollowLinks,
      linkAnchors: links.map(() => long),
      nofollowAnchors: nofollowLinks.map(() => "short"),
    });
    await batch.flush();
    let total = 0;
    let followable = 0;
    let chunks = 0;
    for await (
      const e of kv.list<{ t: number[]; a: string[]; f: number }>({
        prefix: keys.auditLinksAll("aud_x"),
      })
    ) {
      chunks++;
      assert.ok(
        valueBytes(e.value) <= 50 * 1024,
        `chunk ${String(e.key[3])}: ${valueBytes(e.value)} B`,
      );
      assert.ok(e.value.t.length <= LINKS_PER_CHUNK);
      assert.equal(e.value.t.length, e.value.a.length);
      assert.ok(e.value.a.every((a) => a.length <= 200));
      total += e.value.t.length;
      followable += e.value.f;
    }
    assert.equal(total, n);
    assert.equal(followable, 1_000);
    assert.ok(chunks >= 7, `chunked by size (${chunks} chunks)`);
  } finally {
    kv.close();
  }
});

Deno.test("kv limits site: canonical, redirect and hreflang targets longer than any stored URL", async () => {
  const huge = "/" + "x".repeat(3_000);
  const hugeNonLatin = "/" + "東".repeat(1_000); // 9,000 characters percent-encoded
  const enormous = "/" + "y".repeat(40_000);
  // 30 alternates of ~1,450 characters: 43,000 characters of hreflang on one record.
  const alternates = Array.from({ length: 30 }, (_, i) => `/alt-${i}/` + "z".repeat(1_400));
  const { report, fired, findings, origin } = await auditSite((o) => ({
    "/": html(page({ key: "home", links: ["/canon", "/moved", "/alt", "/huge-canon", "/many"] })),
    "/canon": html(page({ key: "canon", head: `<link rel="canonical" href="${o}${huge}">` })),
    "/moved": { status: 301, headers: { location: o + huge } },
    "/alt": html(page({
      key: "alt",
      head: `<link rel="alternate" hreflang="de" href="${o}${hugeNonLatin}">` +
        `<link rel="canonical" href="${o}${hugeNonLatin}">`,
    })),
    "/huge-canon": html(page({
      key: "huge",
      head: `<link rel="canonical" href="${o}${enormous}">`,
    })),
    "/many": html(page({
      key: "many",
      head: alternates.map((a, i) => `<link rel="alternate" hreflang="x${i}" href="${o}${a}">`)
        .join(""),
    })),
  }), { maxPages: 10 });
  // The five pages and some of the alternates (within the page budget); nothing longer.
  assert.equal(report.pages_crawled, 10);
  assert.ok(fired.has("redirect_3xx") || fired.size > 0, `fired: ${[...fired.keys()]}`);
  // A canonical no record can match is not judged as a crawled target.
  for (const item of findings.get("canonical_target_bad") ?? []) {
    assert.ok(String(item.canonical).length <= 1_500, `judged ${String(item.canonical)}`);
  }
  assert.ok(origin);
});

Deno.test("kv limits site: finding keys stay under 2 KiB whatever text an item names", async () => {
  const kv = await openTestKv();
  try {
    const batch = new WriteBatch(kv);
    const w = new FindingsWriter(batch, "aud_x", {});
    const raw = "https://e.example/" + "東".repeat(1_500);
    w.add("broken_internal_links", "https://e.example/", [{ url: raw, n: 1 }]);
    await batch.flush();
    const [e] = await Array.fromAsync(kv.list({ prefix: keys.auditFindingsAll("aud_x") }));
    assert.ok(keyBytes(e.key) <= KV_LIMITS.keyBytes);
    assert.ok(raw.startsWith(e.key[3] as string));
    assert.equal(clipUtf8("a東b", 4), "a東");
    assert.equal(clipUtf8("a🗼b", 4), "a");
    assert.equal(clipUtf8("a🗼b", 5), "a🗼");
  } finally {
    kv.close();
  }
});
