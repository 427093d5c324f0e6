/**
 * Findings as data: each fired check stores its affected items with evidence that fits it, the
 * count stays true beyond the stored cap, the crawl gives the same findings whatever its step
 * size, and sitemap inflation is capped.
 */
import { openTestKv } from "../helpers/kv.ts";
import assert from "node:assert/strict";
import { auditSite, type Routes } from "./audit_site.ts";
import { FINDINGS_CAP, FindingsWriter, WriteBatch } from "../../domain/audit_engine/crawl/store.ts";
import { streamText } from "../../domain/audit_engine/crawl/sitemaps.ts";
import { undocumentedChecks } from "../../domain/audit_engine/check_docs.ts";
import type { Evidence } from "../../domain/audit_engine/types.ts";
import { keys } from "../../kv/keys.ts";
import { html, page, robotsRoute, type Route, sitemapRoute } from "../helpers/sites.ts";

/** The evidence tests crawl 50 pages per step unless a test asks for another size. */
const audit = (build: Routes, stepPages = 50) => auditSite(build, { stepPages });

function items(findings: Map<string, Evidence[]>, check: string): Evidence[] {
  const list = findings.get(check);
  assert.ok(list && list.length > 0, `${check} has evidence; fired: ${[...findings.keys()]}`);
  return list;
}

const defectSite: Routes = (o) => ({
  "/robots.txt": robotsRoute(`User-agent: *\nDisallow:\nFoo: bar\nSitemap: ${o}/sitemap.xml\n`),
  "/sitemap.xml": sitemapRoute([o + "/", o + "/a", o + "/gone", o + "/orphan"]),
  "/": html(page({
    key: "home",
    links: ["/a", "/b", "/c", "/missing", "/old", "/chain-1"],
    body: `<a href="/a">click here</a><img src="/no-alt.png">
      <link rel="alternate" hreflang="english" href="${o}/en">`,
  })),
  "/a": html(page({
    title: "Short",
    key: "a",
    links: ["/"],
    head: `<meta http-equiv="refresh" content="30;url=/refresh-gone">`,
  })),
  "/b": html(page({ title: "Same title on two pages here", key: "b" })),
  "/c": html(page({
    title: "Same title on two pages here",
    key: "c",
    head: `<link rel="canonical" href="${o}/gone">`,
  })),
  "/orphan": html(page({ title: "Nobody links to this page", key: "o" })),
  "/old": { status: 301, headers: { location: "/b" } },
  "/chain-1": { status: 301, headers: { location: "/chain-2" } },
  "/chain-2": { status: 301, headers: { location: "/b" } },
});

Deno.test("evidence: broken link, redirect chain, duplicates, lengths, canonical, robots, sitemap", async () => {
  const { findings, tallies, origin } = await audit(defectSite);
  const o = origin;

  // Broken link: source page, target, anchor text, status.
  const broken = items(findings, "broken_internal_links");
  assert.deepEqual(
    broken.map((b) => [b.url, b.target, b.anchor, b.status]),
    [[`${o}/`, `${o}/missing`, "Guide number 3", 404]],
  );
  // Each failing URL is charged once, where it is fixed: /missing (linked) is a broken link,
  // /gone (listed, a canonical target) a bad sitemap entry and a bad canonical target; only the
  // meta-refresh target nothing else points at is left to http_4xx.
  assert.deepEqual(items(findings, "http_4xx").map((i) => [i.url, i.status]), [
    [`${o}/refresh-gone`, 404],
  ]);
  // The hreflang alternate that 404s is charged to the page naming it, with the reason.
  assert.deepEqual(items(findings, "hreflang_target_bad"), [
    { url: `${o}/`, alternate: `${o}/en`, target_status: 404, reason: "error status" },
  ]);

  // Redirect chain: every hop.
  const [chain] = items(findings, "redirect_chain");
  assert.deepEqual(chain.hops, [`${o}/chain-1`, `${o}/chain-2`, `${o}/b`]);
  assert.equal(chain.hop_count, 2);
  const redirectLinks = items(findings, "internal_redirect_links");
  assert.ok(redirectLinks.some((l) => l.target === `${o}/old` && l.redirects_to === `${o}/b`));

  // Title length: the value and its length.
  const short = items(findings, "title_length").find((i) => i.url === `${o}/a`)!;
  assert.equal(short.title, "Short");
  assert.equal(short.length, 5);

  // Canonical to a missing page: the canonical URL and what it answered.
  const [canon] = items(findings, "canonical_target_bad");
  assert.equal(canon.url, `${o}/c`);
  assert.equal(canon.canonical, `${o}/gone`);
  assert.equal(canon.target_status, 404);

  // hreflang: the bad value. Images without alt: the src. Generic link text: text and href.
  assert.ok(String(items(findings, "hreflang_invalid")[0].bad_values).includes("english"));
  assert.deepEqual(items(findings, "image_alt_missing")[0].images, ["/no-alt.png"]);
  assert.ok(String(items(findings, "link_text_generic")[0].links).includes('"click here" → /a'));

  // robots.txt: the line. Sitemap: the entry and why it is bad. Orphans: the URL.
  assert.ok(
    items(findings, "robots_txt_invalid").some((i) =>
      /line 3: unknown directive/.test(String(i.line))
    ),
  );
  const bad = items(findings, "sitemap_bad_entries");
  assert.ok(bad.some((i) => i.url === `${o}/gone` && i.reason === "error status"));
  assert.deepEqual(items(findings, "orphan_page").map((i) => i.url), [`${o}/orphan`]);

  // Stored items never exceed the true count, and every fired check has items.
  for (const [id, t] of tallies) {
    const n = findings.get(id)?.length ?? 0;
    if (t.affected > 0) assert.ok(n > 0, `${id} fired with no evidence`);
    else assert.equal(n, 0, `${id} did not fire but stored ${n}`);
  }
});

Deno.test("evidence: the graph checks name the chain, the depth, the linker, the header, the missing return", async () => {
  const ps = Array.from({ length: 10 }, (_, i) => `/p${i + 1}`);
  const canon = (o: string, to: string) => `<link rel="canonical" href="${o}${to}">`;
  const { findings, origin: o } = await audit((o) => {
    const r: Record<string, Route> = {
      "/robots.txt": robotsRoute(`User-agent: *\nDisallow:\nSitemap: ${o}/sitemap.xml\n`),
      "/sitemap.xml": sitemapRoute([o + "/", o + "/c", ...ps.slice(1).map((p) => o + p)]),
      "/": html(page({
        key: "home",
        links: ["/a", "/b", "/c", "/doc.pdf", ...ps],
        head: canon(o, "/") +
          `<link rel="alternate" hreflang="en" href="${o}/"><link rel="alternate" hreflang="de" href="${o}/c">`,
      })),
      "/a": html(page({ key: "a", links: ["/"], head: canon(o, "/b") })),
      "/b": html(page({ key: "b", links: ["/"], head: canon(o, "/c") })),
      "/c": html(page({ key: "c", links: ["/"], head: canon(o, "/c") })),
      "/doc.pdf": {
        body: "%PDF-1.4",
        headers: { "content-type": "application/pdf", "x-robots-tag": "noindex" },
      },
    };
    for (const p of ps) r[p] = html(page({ key: p, links: ["/"], head: canon(o, p) }));
    return r;
  });
  const [chain] = items(findings, "canonical_chain");
  assert.deepEqual(chain.chain, [`${o}/a`, `${o}/b`, `${o}/c`]);
  // /p1 is the one indexable page the sitemap leaves out, one click from home.
  assert.deepEqual(items(findings, "sitemap_missing_indexable"), [{ url: `${o}/p1`, depth: 1 }]);
  const single = items(findings, "single_inlink_pages");
  assert.equal(single.length, 11);
  assert.ok(single.every((i) => i.linked_from === `${o}/` && i.inlinks === 1));
  const [pdf] = items(findings, "x_robots_tag_non_html");
  assert.deepEqual(pdf, {
    url: `${o}/doc.pdf`,
    x_robots_tag: "noindex",
    content_type: "application/pdf",
  });
  assert.deepEqual(items(findings, "hreflang_no_return"), [
    { url: `${o}/`, no_return_from: [`${o}/c`] },
  ]);
});

Deno.test("evidence: duplicate titles list the value and the other pages of the group", async () => {
  const { findings, origin: o } = await audit(() => ({
    "/": html(page({ key: "h", links: ["/x", "/y"] })),
    "/x": html(page({ title: "Exactly the same title here", key: "x" })),
    "/y": html(page({ title: "Exactly the same title here", key: "y" })),
  }));
  const dup = items(findings, "title_duplicate");
  assert.deepEqual(dup.map((d) => [d.url, d.title, d.group_size, d.same_as]), [
    [`${o}/x`, "Exactly the same title here", 2, [`${o}/y`]],
    [`${o}/y`, "Exactly the same title here", 2, [`${o}/x`]],
  ]);
});

Deno.test("evidence: slow TTFB names the pages and the measured figure", async () => {
  const { findings } = await audit(() => ({
    "/": { ...html(page({ key: "1", links: ["/p"] })), delayMs: 850 },
    "/p": { ...html(page({ key: "2", title: "Second slow page title" })), delayMs: 850 },
  }));
  const slow = items(findings, "slow_ttfb");
  assert.equal(slow.length, 2);
  for (const s of slow) assert.ok(Number(s.ttfb_ms) >= 800, JSON.stringify(s));
});

Deno.test("the crawl gives the same findings whatever its step size (1 page or 50 per step)", async () => {
  const one = await audit(defectSite, 1);
  const many = await audit(defectSite, 50);
  assert.ok(one.steps > 10, `${one.steps} steps`);
  const strip = (f: Map<string, Evidence[]>, o: string) =>
    JSON.stringify([...f].sort().map(([k, v]) => [k, v.filter((i) => !("ttfb_ms" in i))]))
      .replaceAll(o, "ORIGIN");
  assert.deepEqual(
    [...one.tallies].sort(),
    [...many.tallies].sort(),
  );
  assert.equal(strip(one.findings, one.origin), strip(many.findings, many.origin));
  assert.equal(one.report.score, many.report.score);
});

Deno.test("stored evidence is capped per check; the caller keeps the true count", async () => {
  const kv = await openTestKv();
  try {
    const batch = new WriteBatch(kv);
    const stored: Record<string, number> = {};
    const w = new FindingsWriter(batch, "aud_x", stored);
    for (let i = 0; i < FINDINGS_CAP + 150; i++) {
      w.add("title_missing", `https://e.example/p/${String(i).padStart(5, "0")}`, [{ n: i }]);
    }
    await batch.flush();
    assert.equal(stored.title_missing, FINDINGS_CAP);
    let n = 0;
    let last = "";
    for await (const e of kv.list({ prefix: keys.auditFindings("aud_x", "title_missing") })) {
      const url = e.key[3] as string;
      assert.ok(url > last, "items sort by URL");
      last = url;
      n++;
    }
    assert.equal(n, FINDINGS_CAP);
  } finally {
    kv.close();
  }
});

Deno.test("sitemap gzip is inflated as a stream and cut at the cap (no decompression bomb)", async () => {
  // 16 MiB of zeros compress to ~16 KiB; the reader must stop at the cap, not inflate it all.
  const zeros = new Uint8Array(1024 * 1024);
  const parts: Uint8Array[] = [];
  const cs = new Blob(Array.from({ length: 16 }, () => zeros)).stream()
    .pipeThrough(new CompressionStream("gzip"));
  for await (const p of cs) parts.push(p);
  const gz = new Uint8Array(await new Blob(parts as Uint8Array<ArrayBuffer>[]).arrayBuffer());
  assert.ok(gz.byteLength < 64 * 1024);
  let seen = 0;
  const out = await streamText(gz, 2 * 1024 * 1024, (t) => (seen += t.length));
  assert.equal(out.capped, true);
  assert.equal(out.outBytes, 2 * 1024 * 1024);
  assert.ok(seen <= 2 * 1024 * 1024);
  const plain = await streamText(new TextEncoder().encode("<urlset></urlset>"), 1024, () => {});
  assert.deepEqual(plain, { outBytes: 17, capped: false, gzipError: false });
});

Deno.test("every check has a 'what it means' and a 'how to fix' text", () => {
  assert.deepEqual(undocumentedChecks(), []);
});

Deno.test("evidence: canonical loops of any length, address variants, x-default, files in the sitemap", async () => {
  const canon = (o: string, to: string) => `<link rel="canonical" href="${o}${to}">`;
  const { findings, origin: o } = await audit((o) => ({
    "/sitemap.xml": sitemapRoute([o + "/", o + "/file.pdf"]),
    "/": html(page({
      key: "home",
      links: ["/x", "/y", "/z", "/item?ref=mail", "/item?ref=ad", "/file.pdf"],
      head: `<link rel="alternate" hreflang="en" href="${o}/">` +
        `<link rel="alternate" hreflang="de-DE" href="${o}/x">`,
    })),
    "/x": html(page({ key: "x", links: ["/"], head: canon(o, "/y") })),
    "/y": html(page({ key: "y", links: ["/"], head: canon(o, "/z") })),
    "/z": html(page({ key: "z", links: ["/"], head: canon(o, "/x") })),
    "/item?ref=mail": html(page({ key: "item", title: "Item by mail", links: ["/"] })),
    "/item?ref=ad": html(page({ key: "item", title: "Item by ad", links: ["/"] })),
    "/file.pdf": {
      body: "%PDF-1.4",
      headers: { "content-type": "application/pdf", "x-robots-tag": "none" },
    },
  }));
  const loops = items(findings, "canonical_chain");
  assert.deepEqual(loops.find((l) => l.url === `${o}/x`), {
    url: `${o}/x`,
    canonical: `${o}/y`,
    chain: [`${o}/x`, `${o}/y`, `${o}/z`, `${o}/x`],
    hop_count: 3,
    loop: true,
  });
  assert.equal(loops.length, 3);
  const params = items(findings, "parameter_duplicates");
  assert.deepEqual(params.map((p) => [p.url, p.differs_in, p.group_size, p.same_as]).sort(), [
    [`${o}/item?ref=ad`, "query", 2, [`${o}/item?ref=mail`]],
    [`${o}/item?ref=mail`, "query", 2, [`${o}/item?ref=ad`]],
  ]);
  assert.equal(findings.get("duplicate_content"), undefined, "counted once, as the variants");
  assert.deepEqual(items(findings, "hreflang_x_default_missing"), [
    { url: `${o}/`, languages: ["en", "de-de"] },
  ]);
  // The alternate /x canonicalises elsewhere: not a page of the cluster.
  assert.deepEqual(items(findings, "hreflang_target_bad"), [
    {
      url: `${o}/`,
      alternate: `${o}/x`,
      target_status: 200,
      reason: "canonicalised to another URL",
    },
  ]);
  const bad = items(findings, "sitemap_bad_entries");
  assert.deepEqual(bad, [{ url: `${o}/file.pdf`, status: 200, reason: "noindex (X-Robots-Tag)" }]);
});
