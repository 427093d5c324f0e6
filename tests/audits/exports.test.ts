/**
 * Whole-list exports over HTTP: `?format=csv` and `?format=ndjson` (or `Accept`) on the issues,
 * one check's items and the page inventory parse back to exactly the JSON listing's items under
 * the same filters; RFC 4180 quoting; formula-looking text escaped; the download headers; the
 * auth and not_found rules of the JSON listings; and a large inventory sent while it is still
 * being read (a gate in the store holds the read midway: bytes must already have arrived).
 * `SERPWRIGHT_DEEP=1` runs the streaming case on 100,000 pages.
 */
import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { errorCode, type TestApp, withApp } from "../helpers/app.ts";
import { openTestKv } from "../helpers/kv.ts";
import { keys } from "../../kv/keys.ts";
import { seedCompletedAudit } from "../helpers/seed_audit.ts";
import { connectMcp } from "../mcp/helpers.ts";

const DEEP = Deno.env.get("SERPWRIGHT_DEEP") === "1";

// deno-lint-ignore no-explicit-any
type Item = Record<string, any>;

/** Every item of a JSON listing, page by page. */
async function walk(app: TestApp, key: string, path: string): Promise<Item[]> {
  const all: Item[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const res = await app.req("GET", `${path}${sep}limit=100${cursor ? `&cursor=${cursor}` : ""}`, {
      key,
    });
    assert.equal(res.status, 200, res.text);
    all.push(...res.body.data);
    cursor = res.body.next_cursor;
  } while (cursor !== null);
  return all;
}

/**
 * The cell a CSV export must hold for a JSON value, written apart from the service's encoder:
 * arrays joined with " | ", null empty, text a spreadsheet would run as a formula prefixed '.
 */
function expectedCell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) v = v.join(" | ");
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  const s = String(v);
  return /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
}

function parseCsv(text: string): string[][] {
  return parse(text, { relax_column_count: false, bom: false }) as string[][];
}

/** Asserts the CSV holds exactly `items` under its header (the `other` column stays empty). */
function assertCsvIs(text: string, items: Item[], header: string[]): void {
  const rows = parseCsv(text);
  assert.deepEqual(rows[0], header);
  assert.equal(rows.length - 1, items.length, "one row per item");
  items.forEach((item, i) => {
    const expected = header.map((c) =>
      c === "other" ? "" : expectedCell(c.split(".").reduce((v, k) => v?.[k], item))
    );
    assert.deepEqual(rows[i + 1], expected, `row ${i + 1}`);
  });
  // Every field of every item has its column (a nested one its `field.key` columns).
  for (const item of items) {
    for (const k of Object.keys(item)) {
      assert.ok(header.includes(k) || header.some((h) => h.startsWith(`${k}.`)), k);
    }
  }
}

function parseNdjson(text: string): Item[] {
  assert.ok(text === "" || text.endsWith("\n"));
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

async function get(app: TestApp, key: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(app.url + path, {
    headers: { authorization: `Bearer ${key}`, ...headers },
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function seeded(app: TestApp, pages: number) {
  const { key, accountId } = await app.signup();
  const proj = await app.req("POST", "/v1/projects", {
    key,
    body: { url: "https://big.example" },
  });
  assert.equal(proj.status, 201, proj.text);
  const auditId = "aud_exports0000000001";
  await seedCompletedAudit(app.kv, {
    accountId,
    projectId: proj.body.project_id,
    auditId,
    pages,
    extraFindings: { title_missing: [{ surprise: "kept in other" }] },
  });
  return { key, accountId, projectId: proj.body.project_id as string, auditId };
}

const PAGE_HEADER = [
  "url",
  "fetch_state",
  "status",
  "failure",
  "redirect_target",
  "depth",
  "in_sitemap",
  "indexable",
  "not_indexable_reason",
  "title",
  "word_count",
  "inlinks",
  "link_score",
  "outlinks",
  "response_time_ms",
  "size_bytes",
  "canonical",
  "checks",
  "discovered_by",
  "meta_description",
  "h1",
  "group",
  "issue_counts.performance",
  "issue_counts.security",
  "issue_counts.indexability",
  "issue_counts.mobile",
  "issue_counts.structure",
  "issue_counts.agents",
];

Deno.test("exports: CSV and NDJSON are the JSON lists, whole, quoted, escaped, filtered", () =>
  withApp(async (app) => {
    const { key, auditId } = await seeded(app, 260);
    const base = `/v1/audits/${auditId}`;

    // The page inventory: every URL, each row the JSON item.
    const pages = await walk(app, key, `${base}/pages`);
    assert.equal(pages.length, 260);
    const csv = await get(app, key, `${base}/pages?format=csv`);
    assert.equal(csv.status, 200, csv.text);
    assert.equal(csv.headers.get("content-type"), "text/csv; charset=utf-8; header=present");
    assert.equal(
      csv.headers.get("content-disposition"),
      `attachment; filename="serpwright-${auditId}-pages.csv"`,
    );
    assert.ok(csv.headers.get("x-ratelimit-limit"), "rate-limit headers as on JSON");
    assert.equal(csv.headers.get("cache-control"), "no-store");
    assertCsvIs(csv.text, pages, PAGE_HEADER);
    // RFC 4180: CRLF records, quoted commas, doubled quotes, line breaks inside quotes.
    assert.ok(csv.text.startsWith(PAGE_HEADER.join(",") + "\r\n"));
    assert.ok(csv.text.includes(',"Commas, in, a title",'));
    assert.ok(csv.text.includes(',"He said ""hello"" twice",'));
    assert.ok(csv.text.includes(',"A title\nover two lines",'));
    assert.ok(csv.text.includes(',"Carriage\r\nreturn",'));
    // Formula-looking text is inert; numbers stay numbers.
    const titles = parseCsv(csv.text).slice(1).map((r) => r[9]);
    for (
      const t of [
        `'=HYPERLINK("http://evil.example","click")`,
        "'+SUM(A1:A9)",
        "'-2+3",
        "'@import",
        "'\tTabbed title",
      ]
    ) assert.ok(titles.includes(t), t);
    assert.ok(!titles.some((t) => /^[=+\-@\t\r]/.test(t)), "no cell starts a formula");

    const nd = await get(app, key, `${base}/pages?format=ndjson`);
    assert.equal(nd.status, 200);
    assert.equal(nd.headers.get("content-type"), "application/x-ndjson");
    assert.equal(
      nd.headers.get("content-disposition"),
      `attachment; filename="serpwright-${auditId}-pages.ndjson"`,
    );
    assert.deepEqual(parseNdjson(nd.text), pages);

    // Accept picks a format when `format` is absent; `format` wins; JSON stays the default.
    const byAccept = await get(app, key, `${base}/pages`, { accept: "text/csv" });
    assert.equal(byAccept.text, csv.text);
    const ndAccept = await get(app, key, `${base}/pages`, { accept: "application/x-ndjson" });
    assert.equal(ndAccept.text, nd.text);
    const formatWins = await get(app, key, `${base}/pages?format=json&limit=5`, {
      accept: "text/csv",
    });
    assert.equal(JSON.parse(formatWins.text).data.length, 5);
    const preferJson = await get(app, key, `${base}/pages?limit=5`, {
      accept: "text/csv;q=0.5, application/json",
    });
    assert.equal(JSON.parse(preferJson.text).data.length, 5);
    assert.equal((await get(app, key, `${base}/pages?format=xml`)).status, 400);

    // Filters apply as in JSON.
    for (const q of ["status=4xx", "status=3xx", "indexable=false", "check=title_missing"]) {
      const json = await walk(app, key, `${base}/pages?${q}`);
      assert.ok(json.length > 0, q);
      assertCsvIs((await get(app, key, `${base}/pages?${q}&format=csv`)).text, json, PAGE_HEADER);
      assert.deepEqual(
        parseNdjson((await get(app, key, `${base}/pages?${q}&format=ndjson`)).text),
        json,
      );
    }
    const empty = await get(app, key, `${base}/pages?status=5xx&format=csv`);
    assert.equal(empty.text, PAGE_HEADER.join(",") + "\r\n", "a header row even when empty");

    // Issues, whole and filtered.
    const issueHeader = [
      "check",
      "category",
      "severity",
      "title",
      "meaning",
      "fix",
      "doc_url",
      "affected_count",
      "eligible_count",
      "items_stored",
      "change",
      "items_url",
    ];
    for (const q of ["", "?severity=critical", "?category=structure", "?change=new"]) {
      const json = await walk(app, key, `${base}/issues${q}`);
      const sep = q ? "&" : "?";
      const issues = await get(app, key, `${base}/issues${q}${sep}format=csv`);
      assert.equal(
        issues.headers.get("content-disposition"),
        `attachment; filename="serpwright-${auditId}-issues.csv"`,
      );
      assertCsvIs(issues.text, json, issueHeader);
      const ndIssues = await get(app, key, `${base}/issues${q}${sep}format=ndjson`);
      assert.deepEqual(parseNdjson(ndIssues.text), json);
    }

    // One check's items: evidence as columns, a stable header per check.
    const items = async (check: string, header: string[]) => {
      const json = await walk(app, key, `${base}/issues/${check}`);
      assert.ok(json.length > 0, check);
      const file = await get(app, key, `${base}/issues/${check}?format=csv`);
      assert.equal(
        file.headers.get("content-disposition"),
        `attachment; filename="serpwright-${auditId}-issues-${check}.csv"`,
      );
      assert.deepEqual(parseCsv(file.text)[0], header);
      const nd = await get(app, key, `${base}/issues/${check}?format=ndjson`);
      assert.deepEqual(parseNdjson(nd.text), json);
      return { json, rows: parseCsv(file.text), text: file.text };
    };
    const broken = await items("broken_internal_links", [
      "url",
      "target",
      "anchor",
      "status",
      "failure",
      "other",
    ]);
    assertCsvIs(broken.text, broken.json, broken.rows[0]);
    assert.ok(broken.text.includes(`,"Read ""this"", then\nthat",`));
    assert.ok(broken.rows.some((r) => r[2] === "'=cmd|' /C calc'!A0"));
    const chain = await items("redirect_chain", [
      "url",
      "hops",
      "hop_count",
      "final_status",
      "other",
    ]);
    assertCsvIs(chain.text, chain.json, chain.rows[0]);
    assert.equal(
      chain.rows[1][1],
      "https://big.example/a | https://big.example/b | https://big.example/c",
    );
    // A field the check's columns do not name lands in `other`, as JSON.
    const missing = await items("title_missing", ["url", "other"]);
    assert.ok(missing.rows.some((r) => r[1] === JSON.stringify({ surprise: "kept in other" })));
    assert.equal(missing.rows.length - 1, missing.json.length);
    // A check that did not fire: a header row only.
    const quiet = await get(app, key, `${base}/issues/hsts_missing?format=csv`);
    assert.equal(quiet.status, 200);
    assert.equal(quiet.text, "url,strict_transport_security,other\r\n");
  }));

Deno.test("exports: the rules of the JSON listings, in every format", () =>
  withApp(async (app) => {
    const { key, auditId, projectId } = await seeded(app, 20);
    const other = await app.signup();
    const paths = [
      `/v1/audits/${auditId}/pages`,
      `/v1/audits/${auditId}/issues`,
      `/v1/audits/${auditId}/issues/title_missing`,
    ];
    for (const path of paths) {
      for (
        const [q, headers] of [["?format=csv", {}], ["?format=ndjson", {}], ["", {
          accept: "text/csv",
        }]] as const
      ) {
        const foreign = await app.req("GET", path + q, { key: other.key, headers });
        assert.equal(foreign.status, 404, `${path}${q}`);
        assert.equal(errorCode(foreign), "not_found");
        assert.match(foreign.headers.get("content-type") ?? "", /application\/json/);
        const anonymous = await app.req("GET", path + q, { headers });
        assert.equal(anonymous.status, 401);
        assert.equal(errorCode(anonymous), "unauthorized");
      }
    }
    const unknown = await app.req("GET", `/v1/audits/${auditId}/issues/no_such_check?format=csv`, {
      key,
    });
    assert.equal(errorCode(unknown), "not_found");
    const badCheck = await app.req("GET", `/v1/audits/${auditId}/pages?check=nope&format=csv`, {
      key,
    });
    assert.equal(errorCode(badCheck), "invalid_request");

    // Before completion: 409 as in JSON.
    const started = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
    assert.equal(started.status, 202, started.text);
    const queued = await app.req("GET", `/v1/audits/${started.body.audit_id}/pages?format=csv`, {
      key,
    });
    assert.equal(errorCode(queued), "invalid_state");

    // MCP answers JSON: a file is refused with the address that serves it.
    const client = await connectMcp(app, { key });
    try {
      const res = await client.callTool({
        name: "audits",
        arguments: { action: "pages", audit_id: auditId, format: "csv" },
      });
      assert.equal(res.isError, true);
      // deno-lint-ignore no-explicit-any
      const text = (res.content as any[])[0].text as string;
      assert.match(text, /^Error invalid_request: format: /);
      assert.ok(text.includes(`/v1/audits/${auditId}/pages?format=csv`), text);
      const json = await client.callTool({
        name: "audits",
        arguments: { action: "pages", audit_id: auditId, format: "json", limit: 3 },
      });
      // deno-lint-ignore no-explicit-any
      assert.equal((json.structuredContent as any).data.length, 3);
    } finally {
      await client.close();
    }

    // The document shows the other media types.
    const doc = (await app.req("GET", "/v1/openapi.json")).body;
    const content = doc.paths["/v1/audits/{auditId}/pages"].get.responses["200"].content;
    assert.deepEqual(Object.keys(content), [
      "application/json",
      "text/csv",
      "application/x-ndjson",
    ]);
  }));

/**
 * A KV whose listing of one audit's pages stops after `after` entries until released: the
 * server cannot have read the whole inventory before the gate opens.
 */
function gatedKv(kv: Deno.Kv, auditId: string, after: number) {
  let seen = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let blocked!: () => void;
  const reached = new Promise<void>((r) => (blocked = r));
  const gated = new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop !== "list") return typeof value === "function" ? value.bind(target) : value;
      return (selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
        const inner = target.list(selector, options);
        const prefix = (selector as { prefix?: Deno.KvKey }).prefix;
        if (prefix?.[0] !== "audit_pages" || prefix?.[1] !== auditId) return inner;
        return {
          get cursor() {
            return inner.cursor;
          },
          async next() {
            if (seen >= after) {
              blocked();
              await gate;
            }
            const r = await inner.next();
            if (!r.done) seen++;
            return r;
          },
          [Symbol.asyncIterator]() {
            return this;
          },
        };
      };
    },
  });
  return { kv: gated, release, reached, seen: () => seen };
}

Deno.test({
  name: `exports: ${DEEP ? "100,000" : "3,000"} pages stream while the inventory is still read`,
  async fn() {
    const pages = DEEP ? 100_000 : 3_000;
    const auditId = "aud_exports0000000001";
    const store = await openTestKv();
    const gate = gatedKv(store, auditId, 1_000);
    await withApp(async (app) => {
      const { key } = await seeded(app, pages);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          gate.release();
          reject(new Error("no bytes while the read was held: the body was buffered"));
        }, 30_000);
      });
      // Headers and bytes arrive while the server is held at the gate, its read unfinished.
      const res = await Promise.race([
        fetch(`${app.url}/v1/audits/${auditId}/pages?format=csv`, {
          headers: { authorization: `Bearer ${key}` },
        }),
        timeout,
      ]);
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      while (!text.includes("\r\nhttps://big.example/p/000001,")) {
        const chunk = await Promise.race([reader.read(), timeout]);
        assert.ok(!chunk.done, "the body ended before the gate opened");
        text += decoder.decode(chunk.value, { stream: true });
      }
      await Promise.race([gate.reached, timeout]);
      clearTimeout(timer);
      assert.ok(gate.seen() <= 1_000, `read ${gate.seen()} entries at the gate`);
      gate.release();
      let rows = 0;
      let tail = "";
      // Count records without keeping the file: each page's row starts with its URL.
      const count = (s: string) => (s.match(/\r\nhttps:\/\/big\.example\/p\/\d{6},/g) ?? []).length;
      rows += count(text.slice(0, text.lastIndexOf("\r\n")));
      tail = text.slice(text.lastIndexOf("\r\n"));
      while (true) {
        const chunk = await reader.read();
        if (chunk.done) break;
        const s = tail + decoder.decode(chunk.value, { stream: true });
        const cut = s.lastIndexOf("\r\n");
        rows += count(s.slice(0, cut));
        tail = s.slice(cut);
      }
      rows += count(tail + "\r\n");
      assert.equal(rows, pages);
      assert.equal(gate.seen(), pages);
    }, { kv: gate.kv });
  },
});

Deno.test("exports: lab columns only in the inventory of an audit that sampled lab data", () =>
  withApp(async (app) => {
    const { key, auditId, accountId } = await seeded(app, 12);
    const path = `/v1/audits/${auditId}/pages?format=csv`;
    // A raw audit: no lab columns at all.
    const raw = parseCsv((await get(app, key, path)).text);
    assert.deepEqual(raw[0], PAGE_HEADER);
    // The same audit as a rendered one with a lab page: the lab columns come last.
    const rec = await app.kv.get<Record<string, unknown>>(keys.audit(accountId, auditId));
    await app.kv.set(rec.key, {
      ...rec.value!,
      render: true,
      renderStats: { pages_rendered: 2, lab_pages: 1, pages_failed: 0 },
    });
    const first = (await app.req("GET", `/v1/audits/${auditId}/pages?limit=1`, { key })).body
      .data[0];
    const page = await app.kv.get<Record<string, unknown>>(keys.auditPage(auditId, first.url));
    await app.kv.set(page.key, {
      ...page.value!,
      lab: { lcpMs: 1800, cls: 0.05, tbtMs: 120, bytes: 51200, requests: 14 },
    });
    const lab = parseCsv((await get(app, key, path)).text);
    assert.deepEqual(lab[0], [
      ...PAGE_HEADER,
      "lab.lcp_ms",
      "lab.cls",
      "lab.tbt_ms",
      "lab.bytes",
      "lab.requests",
    ]);
    const row = lab.find((r) => r[0] === first.url)!;
    assert.deepEqual(row.slice(-5), ["1800", "0.05", "120", "51200", "14"]);
    assert.ok(lab.slice(1).filter((r) => r[0] !== first.url).every((r) => r.at(-1) === ""));
  }));
