import assert from "node:assert/strict";
import { errorCode, withApp } from "../helpers/app.ts";

Deno.test("POST /v1/projects normalises the URL and applies defaults", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const res = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "  HTTPS://Example.COM:443//blog//post#top " },
    });
    assert.equal(res.status, 201);
    assert.match(res.body.project_id, /^proj_/);
    assert.equal(res.body.url, "https://example.com/blog/post");
    assert.equal(res.body.name, "example.com");
    assert.equal(res.body.language, "en");
    assert.equal(res.body.country, "US");
    assert.equal(res.body.status, "setup");
    assert.equal(res.body.sandbox, true);
    assert.equal(res.body.access, "sandbox");
    assert.equal("counts" in res.body, false);
    assert.equal("latest_audit" in res.body, false);
  }));

Deno.test("POST /v1/projects keeps given name, lowercases language, uppercases country", () =>
  withApp(async (app) => {
    const { accountId } = await app.signup();
    const live = await app.liveKey(accountId);
    const res = await app.req("POST", "/v1/projects", {
      key: live,
      body: { url: "http://shop.example.org", name: "Shop", language: "DE", country: "de" },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.url, "http://shop.example.org");
    assert.equal(res.body.name, "Shop");
    assert.equal(res.body.language, "de");
    assert.equal(res.body.country, "DE");
    assert.equal(res.body.sandbox, false);
    assert.equal(res.body.access, "pending_payment");
  }));

Deno.test("POST /v1/projects refuses invalid input and creates nothing", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const bad: [unknown, RegExp][] = [
      [{}, /^url:/],
      [{ url: "" }, /^url:/],
      [{ url: "example.com" }, /^url:/],
      [{ url: "ftp://example.com" }, /^url:/],
      [{ url: "javascript:alert(1)" }, /^url:/],
      [{ url: "https://user:pass@example.com" }, /^url:/],
      [{ url: `https://example.com/${"a".repeat(490)}` }, /^url:/],
      [{ url: "https://example.com", name: "" }, /^name:/],
      [{ url: "https://example.com", name: "n".repeat(121) }, /^name:/],
      [{ url: "https://example.com", language: "e" }, /^language:/],
      [{ url: "https://example.com", language: "x".repeat(11) }, /^language:/],
      [{ url: "https://example.com", country: "U" }, /^country:/],
      [{ url: "https://example.com", country: 12 }, /^country:/],
      [{ url: "https://example.com", owner: "me" }, /owner/],
    ];
    for (const [body, message] of bad) {
      const res = await app.req("POST", "/v1/projects", { key, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(errorCode(res), "invalid_request");
      assert.match(res.body.error.message, message);
    }
    const list = await app.req("GET", "/v1/projects", { key });
    assert.deepEqual(list.body.projects, []);
    assert.equal((await app.req("GET", "/v1/account", { key })).body.projects_count, 0);
  }));

Deno.test("sandbox keys are capped at one project, also under parallel requests", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const results = await Promise.all(
      Array.from(
        { length: 6 },
        (_, i) =>
          app.req("POST", "/v1/projects", { key, body: { url: `https://site${i}.example` } }),
      ),
    );
    assert.equal(results.filter((r) => r.status === 201).length, 1);
    for (const r of results.filter((r) => r.status !== 201)) {
      assert.equal(r.status, 403);
      assert.equal(errorCode(r), "sandbox_limit_reached");
    }
    assert.equal((await app.req("GET", "/v1/account", { key })).body.projects_count, 1);
  }));

Deno.test("live keys create projects freely; list newest first with counts; detail", () =>
  withApp(async (app) => {
    const { accountId } = await app.signup();
    const live = await app.liveKey(accountId);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      app.clock.advance(1000);
      const res = await app.req("POST", "/v1/projects", {
        key: live,
        body: { url: `https://s${i}.example.com` },
      });
      ids.push(res.body.project_id);
    }
    const list = await app.req("GET", "/v1/projects", { key: live });
    assert.deepEqual(
      list.body.projects.map((p: { project_id: string }) => p.project_id),
      ids.reverse(),
    );
    assert.deepEqual(list.body.projects[0].counts, { keywords: 0, articles: 0, audits: 0 });
    const detail = await app.req("GET", `/v1/projects/${ids[0]}`, { key: live });
    assert.equal(detail.status, 200);
    assert.equal(detail.body.latest_audit, null);
    assert.deepEqual(detail.body.counts, { keywords: 0, articles: 0, audits: 0 });
    assert.equal((await app.req("GET", "/v1/account", { key: live })).body.projects_count, 3);
  }));

Deno.test("another account's project is indistinguishable from a missing one", () =>
  withApp(async (app) => {
    const a = await app.signup();
    const b = await app.signup();
    const proj = await app.req("POST", "/v1/projects", {
      key: a.key,
      body: { url: "https://a.example" },
    });
    const foreign = await app.req("GET", `/v1/projects/${proj.body.project_id}`, { key: b.key });
    const missing = await app.req("GET", "/v1/projects/proj_doesnotexist", { key: b.key });
    assert.equal(foreign.status, 404);
    assert.equal(missing.status, 404);
    assert.equal(errorCode(foreign), "not_found");
    assert.equal(
      foreign.body.error.message.replace(proj.body.project_id, "X"),
      missing.body.error.message.replace("proj_doesnotexist", "X"),
    );
  }));
