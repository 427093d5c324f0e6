/**
 * Page groups and spreadsheet-ready exports over HTTP (issue 31 §2 and §6), on a fixture site
 * with two templates (/product/*, /blog/*) and a few lone pages: groups detected from the
 * crawled URLs and counted, `?group=` on the pages and issues lists (paged, with other filters,
 * and as files), the caller's own groups from the audit options, bad groups and patterns as the
 * error shape, the audits MCP tool's groups action; the inventory CSV with a UTF-8 BOM read back
 * with csv-parse, its new columns and, for a raw audit, no lab columns.
 */
import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { computeGroups } from "../../domain/audits/groups.ts";
import { keys } from "../../kv/keys.ts";
import { errorCode, subscribeProject, type TestApp, withApp } from "../helpers/app.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { type FakeSite, html, page, serveSite } from "../helpers/sites.ts";
import { call, connectMcp } from "../mcp/helpers.ts";

// deno-lint-ignore no-explicit-any
type Item = Record<string, any>;

/** Products /product/1-4 (one titled in non-ASCII), blog /blog/a-c (one untitled), lone pages. */
function shop(): FakeSite {
  let origin = "";
  const site = serveSite((path) => {
    const o = origin;
    const table: Record<string, string> = {
      "/": page({
        title: "Home of the fixture shop",
        key: "home",
        links: [
          ...[1, 2, 3, 4].map((n) => `${o}/product/${n}`),
          ...["a", "b", "c"].map((s) => `${o}/blog/${s}`),
          `${o}/about`,
          `${o}/help/x`,
          `${o}/help/y`,
        ],
      }),
      "/product/1": page({ title: "Café crème, the product", key: "p1", h1: "Café crème" }),
      "/product/2": page({ title: "Second product of the shop", key: "p2" }),
      "/product/3": page({ title: "Third product of the shop", key: "p3" }),
      "/product/4": page({ title: "Fourth product of the shop", key: "p4" }),
      "/blog/a": page({ title: null, key: "ba" }),
      "/blog/b": page({ title: "Blog post B of the shop", key: "bb" }),
      "/blog/c": page({ title: "Blog post C of the shop", key: "bc" }),
      "/about": page({ title: "About the fixture shop", key: "about" }),
      "/help/x": page({ title: "Help page X of the shop", key: "hx" }),
      "/help/y": page({ title: "Help page Y of the shop", key: "hy" }),
    };
    return table[path] === undefined ? undefined : html(table[path]);
  });
  origin = site.origin;
  return site;
}

async function audited(app: TestApp, site: FakeSite, body?: Record<string, unknown>) {
  const { accountId } = await app.signup();
  const key = await app.liveKey(accountId);
  const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
  const projectId = proj.body.project_id as string;
  await subscribeProject(app, accountId, projectId, "pro");
  const res = await app.req("POST", `/v1/projects/${projectId}/audits`, { key, body });
  assert.equal(res.status, 202, res.text);
  const done = await waitForAudit(app, key, res.body.audit_id);
  assert.equal(done.body.status, "completed", done.text);
  return { key, projectId, auditId: res.body.audit_id as string, audit: done.body };
}

/** Every item of a JSON listing, `limit` per page. */
async function walk(app: TestApp, key: string, path: string, limit = 100): Promise<Item[]> {
  const all: Item[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const res = await app.req(
      "GET",
      `${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
      { key },
    );
    assert.equal(res.status, 200, res.text);
    all.push(...res.body.data);
    cursor = res.body.next_cursor;
  } while (cursor !== null);
  return all;
}

/** A file as sent: `Response.text()` would drop a BOM, so the bytes are decoded keeping it. */
async function getText(app: TestApp, key: string, path: string) {
  const res = await fetch(app.url + path, { headers: { authorization: `Bearer ${key}` } });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return {
    status: res.status,
    bytes,
    text: new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes),
  };
}

const paths = (items: Item[]) => items.map((p) => new URL(p.url).pathname).sort();

Deno.test("groups: detected from the URLs, counted, and read with ?group= in JSON and CSV", () =>
  withApp(async (app) => {
    const site = shop();
    try {
      const { key, auditId } = await audited(app, site);
      const base = `/v1/audits/${auditId}`;
      const inventory = await walk(app, key, `${base}/pages`);
      assert.equal(inventory.length, 11);

      // Two templates of 3+ URLs, largest first; /help (2 URLs) and the lone pages are `other`.
      const groups = await app.req("GET", `${base}/groups`, { key });
      assert.equal(groups.status, 200, groups.text);
      assert.ok(groups.headers.get("x-ratelimit-limit"));
      const byName = new Map<string, Item>(groups.body.data.map((g: Item) => [g.name, g]));
      assert.deepEqual(groups.body.data.map((g: Item) => g.name), ["product", "blog", "other"]);
      assert.deepEqual(
        groups.body.data.map((g: Item) => [g.pattern, g.source, g.pages]),
        [["/product/**", "detected", 4], ["/blog/**", "detected", 3], [null, "other", 4]],
      );
      const blog = byName.get("blog")!;
      const untitledTop = blog.top_issues.find((t: Item) => t.check === "title_missing");
      assert.equal(untitledTop?.affected_count, 1);
      assert.equal(untitledTop?.severity, "critical");
      assert.match(untitledTop?.title, /title/i);
      assert.ok(blog.pages_with_issues >= 1);
      assert.equal(blog.pages_url, `${base}/pages?group=blog`);
      assert.ok(
        !byName.get("product")!.top_issues.some((t: Item) => t.check === "title_missing"),
      );

      // Each inventory item names its group, and the groups partition the inventory.
      for (const p of inventory) {
        const path = new URL(p.url).pathname;
        const want = path.startsWith("/product/")
          ? "product"
          : path.startsWith("/blog/")
          ? "blog"
          : "other";
        assert.equal(p.group, want, path);
      }

      // ?group= pages: exactly the group's URLs, paged (2 a page) and filtered further.
      const blogPages = await walk(app, key, `${base}/pages?group=blog`, 2);
      assert.deepEqual(paths(blogPages), ["/blog/a", "/blog/b", "/blog/c"]);
      const other = await walk(app, key, `${base}/pages?group=other`);
      assert.deepEqual(paths(other), ["/", "/about", "/help/x", "/help/y"]);
      const untitled = await walk(app, key, `${base}/pages?group=blog&check=title_missing`);
      assert.deepEqual(paths(untitled), ["/blog/a"]);
      assert.equal(
        (await walk(app, key, `${base}/pages?group=product&check=title_missing`)).length,
        0,
      );

      // ?group= issues: the group's checks, counted over its pages.
      const blogIssues = await walk(app, key, `${base}/issues?group=blog`);
      const missing = blogIssues.find((i) => i.check === "title_missing");
      assert.equal(missing?.affected_count, 1);
      assert.equal(missing?.eligible_count, 3);
      const productIssues = await walk(app, key, `${base}/issues?group=product`);
      assert.ok(!productIssues.some((i) => i.check === "title_missing"));
      for (const i of productIssues) assert.ok(i.affected_count >= 1 && i.affected_count <= 4);

      // A group the audit does not have: 400 in the error shape, JSON and file alike.
      for (const q of ["pages?group=nope", "issues?group=nope", "pages?group=nope&format=csv"]) {
        const bad = await app.req("GET", `${base}/${q}`, { key });
        assert.equal(bad.status, 400, q);
        assert.equal(errorCode(bad), "invalid_request");
        assert.match(bad.body.error.message, /group/);
      }

      // The inventory CSV of a group, with a BOM: Excel's UTF-8, read back by csv-parse.
      const csv = await getText(app, key, `${base}/pages?group=product&format=csv&bom=1`);
      assert.equal(csv.status, 200, csv.text);
      assert.deepEqual([...csv.bytes.slice(0, 3)], [0xef, 0xbb, 0xbf], "the UTF-8 BOM first");
      assert.ok(csv.text.startsWith("\uFEFFurl,"));
      const rows = parse(csv.text, { bom: true, columns: true }) as Record<string, string>[];
      assert.equal(rows.length, 4);
      const header = Object.keys(rows[0]);
      for (
        const c of [
          "title",
          "meta_description",
          "h1",
          "canonical",
          "word_count",
          "not_indexable_reason",
          "group",
          "checks",
          "issue_counts.indexability",
          "issue_counts.structure",
          "issue_counts.security",
          "issue_counts.performance",
          "issue_counts.mobile",
          "issue_counts.agents",
        ]
      ) assert.ok(header.includes(c), c);
      assert.ok(!header.some((c) => c.startsWith("lab.")), "a raw audit has no lab columns");
      assert.ok(rows.every((r) => r.group === "product"));
      const cafe = rows.find((r) => r.url.endsWith("/product/1"))!;
      assert.equal(cafe.title, "Café crème, the product");
      assert.equal(cafe.h1, "Café crème");
      const json = inventory.find((p) => p.url === cafe.url)!;
      assert.equal(cafe.meta_description, json.meta_description);
      assert.ok(json.meta_description.length > 20);
      assert.equal(cafe.word_count, String(json.word_count));
      const total = ["indexability", "structure", "security", "performance", "mobile"]
        .reduce((n, c) => n + Number(cafe[`issue_counts.${c}`]), 0);
      assert.equal(total, json.checks.length, "the category counts add up to its checks");

      // Without bom=1 no BOM; the issues file takes bom=1 too.
      const plain = await getText(app, key, `${base}/pages?format=csv`);
      assert.ok(plain.text.startsWith("url,") && plain.bytes[0] === 0x75, "no BOM by default");
      const plainRows = parse(plain.text, { columns: true }) as Record<string, string>[];
      assert.equal(plainRows.length, 11);
      const issuesCsv = await getText(app, key, `${base}/issues?group=blog&format=csv&bom=1`);
      assert.ok(issuesCsv.text.startsWith("\uFEFFcheck,"));
      const issueRows = parse(issuesCsv.text, { bom: true, columns: true }) as Item[];
      assert.deepEqual(issueRows.map((r) => r.check), blogIssues.map((i) => i.check));
      assert.equal((await app.req("GET", `${base}/pages?format=csv&bom=yes`, { key })).status, 400);

      // The audits MCP tool lists the groups and filters by one.
      const client = await connectMcp(app, { key });
      try {
        const listed = await call(client, "audits", { action: "groups", audit_id: auditId });
        assert.deepEqual(listed.data.map((g: Item) => g.name), ["product", "blog", "other"]);
        const pages = await call(client, "audits", {
          action: "pages",
          audit_id: auditId,
          group: "blog",
        });
        assert.deepEqual(paths(pages.data), ["/blog/a", "/blog/b", "/blog/c"]);
      } finally {
        await client.close();
      }

      // The HTML report has a groups section with each group's counts.
      const report = await getText(app, key, `${base}/report`);
      assert.equal(report.status, 200);
      const section = report.text.slice(report.text.indexOf('id="groups-h"'));
      assert.ok(section.includes("Page groups"), "the report's groups section");
      const row = (name: string) => section.slice(section.indexOf(`<th scope="row">${name}`));
      assert.match(row("product"), /<code>\/product\/\*\*<\/code>\s*<\/th>\s*<td>4<\/td>/);
      assert.match(row("blog"), /<td>3<\/td>/);
      assert.match(row("other"), /\(the rest\)\s*<\/th>\s*<td>4<\/td>/);

      // Another account's audit: not_found, as for every audit read.
      const stranger = await app.signup();
      const foreign = await app.req("GET", `${base}/groups`, { key: stranger.key });
      assert.equal(foreign.status, 404);
      assert.equal(errorCode(foreign), "not_found");
    } finally {
      await site.close();
    }
  }));

Deno.test("groups: the caller's own patterns, first match wins; bad groups are refused", () =>
  withApp(async (app) => {
    const site = shop();
    try {
      const groups = [
        { name: "cafe", pattern: "/product/1" },
        { name: "shop", pattern: "/product/*" },
        { name: "help", pattern: "/help/**" },
        { name: "empty", pattern: "/nothing/**" },
      ];
      const { key, auditId, audit, projectId } = await audited(app, site, { groups });
      assert.deepEqual(audit.options.groups, groups);
      const base = `/v1/audits/${auditId}`;
      const listed = await app.req("GET", `${base}/groups`, { key });
      assert.deepEqual(
        listed.body.data.map((g: Item) => [g.name, g.source, g.pages]),
        [
          ["cafe", "custom", 1],
          ["shop", "custom", 3],
          ["help", "custom", 2],
          ["empty", "custom", 0],
          ["other", "other", 5],
        ],
      );
      assert.deepEqual(
        paths(await walk(app, key, `${base}/pages?group=shop`)),
        ["/product/2", "/product/3", "/product/4"],
      );
      assert.equal((await walk(app, key, `${base}/pages?group=empty`)).length, 0);
      // Detected names are not groups of this audit.
      const bad = await app.req("GET", `${base}/pages?group=blog`, { key });
      assert.equal(bad.status, 400);
      assert.equal(errorCode(bad), "invalid_request");

      // Bad groups at creation: 400 naming the field, nothing started.
      const path = `/v1/projects/${projectId}/audits`;
      const cases: [unknown, RegExp][] = [
        [[{ name: "x", pattern: "no-slash" }], /groups\.0\.pattern/],
        [[{ name: "other", pattern: "/a/**" }], /groups\.0\.name/],
        [[{ name: "has space", pattern: "/a/**" }], /groups\.0\.name/],
        [[{ name: "a", pattern: "/a/**" }, { name: "a", pattern: "/b/**" }], /groups/],
        [[{ name: "a", pattern: "/a/**", extra: 1 }], /groups/],
        [Array.from({ length: 21 }, (_, i) => ({ name: `g${i}`, pattern: `/g${i}/**` })), /groups/],
      ];
      for (const [g, field] of cases) {
        const res = await app.req("POST", path, { key, body: { groups: g } });
        assert.equal(res.status, 400, JSON.stringify(g));
        assert.equal(errorCode(res), "invalid_request");
        assert.match(res.text, field);
      }
    } finally {
      await site.close();
    }
  }));

/** An audit's stored groups and index keys, as KV has them. */
async function storedGroups(app: TestApp, auditId: string) {
  const out: unknown[] = [];
  for await (const e of app.kv.list({ prefix: keys.auditGroupsAll(auditId) })) {
    out.push([e.key, e.value]);
  }
  for await (const e of app.kv.list({ prefix: keys.auditGroupPagesAll(auditId) })) {
    out.push([e.key, e.value]);
  }
  return out;
}

Deno.test("groups: what the site-wide checks' last pass counts is what a count of its own stores", () =>
  withApp(async (app) => {
    const site = shop();
    try {
      const custom = [
        { name: "cafe", pattern: "/product/1" },
        { name: "help", pattern: "/help/**" },
      ];
      for (const body of [undefined, { groups: custom }]) {
        const { auditId } = await audited(app, site, body);
        const inPass = await storedGroups(app, auditId);
        assert.ok(inPass.length > 10, "the groups and their index are stored");
        // Wiped, and counted again the way a completion in another process counts them.
        const op = app.kv.atomic();
        for (const [key] of inPass as [Deno.KvKey][]) op.delete(key);
        assert.ok((await op.commit()).ok);
        assert.deepEqual(await storedGroups(app, auditId), []);
        await computeGroups(app.kv, auditId, body?.groups);
        assert.deepEqual(await storedGroups(app, auditId), inPass);
      }
    } finally {
      await site.close();
    }
  }));
