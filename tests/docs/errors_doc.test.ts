import assert from "node:assert/strict";
import { ERROR_CODES } from "../../domain/platform/errors.ts";
import { errorCode, type TestApp, withApp } from "../helpers/app.ts";
import { idsOf } from "./helpers.ts";

const SOURCE_DIRS = ["domain", "routes", "jobs", "kv"];

/** Every code the source can throw: each `new ApiError("<code>"` under the service's folders. */
async function thrownCodes(): Promise<Set<string>> {
  const codes = new Set<string>();
  const root = new URL("../../", import.meta.url);
  async function walk(dir: URL) {
    for await (const e of Deno.readDir(dir)) {
      const u = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
      if (e.isDirectory) await walk(u);
      else if (e.name.endsWith(".ts")) {
        const text = await Deno.readTextFile(u);
        for (const m of text.matchAll(/new ApiError\(\s*"([a-z_]+)"/g)) codes.add(m[1]);
      }
    }
  }
  for (const d of SOURCE_DIRS) await walk(new URL(d + "/", root));
  return codes;
}

async function page(app: TestApp, path: string): Promise<string> {
  const res = await fetch(app.url + path);
  assert.equal(res.status, 200, path);
  return await res.text();
}

Deno.test("/docs/errors has an anchor, status, meaning and action for every error code", () =>
  withApp(async (app) => {
    const res = await fetch(app.url + "/docs/errors");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    const html = await res.text();
    const ids = idsOf(html);
    assert.equal(new Set(ids).size, ids.length, "ids are unique");
    for (const [code, e] of Object.entries(ERROR_CODES)) {
      assert.ok(ids.includes(code), `id="${code}" missing`);
      const section = html.slice(html.indexOf(`id="${code}"`)).split("</section>")[0];
      assert.ok(section.includes(`HTTP ${e.status}`), `${code}: status`);
      // The page escapes text; compare against the escaped form.
      const escaped = (t: string) =>
        t.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
          .replaceAll('"', "&quot;").replaceAll("'", "&#39;");
      assert.ok(section.includes(escaped(e.meaning)), `${code}: meaning`);
      assert.ok(section.includes(escaped(e.action)), `${code}: action`);
    }
  }));

Deno.test("every code the source can throw is in ERROR_CODES (and so on /docs/errors)", async () => {
  const thrown = await thrownCodes();
  assert.ok(thrown.size >= 10, `scanned ${thrown.size} codes`);
  const missing = [...thrown].filter((c) => !(c in ERROR_CODES));
  assert.deepEqual(missing, [], "codes thrown but not documented");
});

Deno.test("error responses the API really sends carry doc_urls whose anchors exist", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const seen = new Map<number, string>();
    const check = (res: Awaited<ReturnType<TestApp["req"]>>, status: number) => {
      assert.equal(res.status, status, res.text);
      const code = errorCode(res);
      seen.set(status, res.body.error.doc_url);
      return code;
    };
    check(await app.req("GET", "/v1/account"), 401);
    check(await app.req("GET", "/v1/projects/proj_missing", { key }), 404);
    check(await app.req("GET", "/v1/no-such-route", { key }), 404);
    check(await app.req("POST", "/v1/projects", { key, body: { url: "not a url" } }), 400);
    check(
      await app.req("POST", "/v1/projects", {
        key,
        rawBody: "{nope",
        headers: { "content-type": "application/json" },
      }),
      400,
    );
    assert.equal(check(await app.req("DELETE", "/v1/account", { key }), 405), "method_not_allowed");
    assert.equal(
      check(
        await app.req("POST", "/v1/projects", {
          key,
          body: { url: "https://example.com", name: "x".repeat(70_000) },
        }),
        413,
      ),
      "payload_too_large",
    );
    // Signups are limited to 5 per hour per IP: the sixth from one address is a 429.
    let last;
    for (let i = 0; i < 6; i++) {
      last = await app.req("POST", "/v1/accounts", {
        body: { email: `burst${i}@example.com` },
        ip: "203.0.113.77",
      });
    }
    assert.equal(check(last!, 429), "rate_limited");
    assert.ok(Number(last!.headers.get("retry-after")) > 0);

    const html = await page(app, "/docs/errors");
    const ids = new Set(idsOf(html));
    for (const [status, docUrl] of seen) {
      const u = new URL(docUrl);
      assert.equal(u.origin, "http://localhost:8000", "doc_url uses PUBLIC_BASE_URL");
      assert.equal(u.pathname, "/docs/errors", `${status}: ${docUrl}`);
      assert.ok(ids.has(u.hash.slice(1)), `${status}: anchor ${u.hash} exists`);
    }
    assert.deepEqual([...seen.keys()].sort(), [400, 401, 404, 405, 413, 429]);
  }));
