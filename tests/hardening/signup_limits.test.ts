/**
 * Issue 16, section 3: the abuse limits a public, CAPTCHA-free signup needs, each set by the
 * operator and each tested: per-IP and global signup rates, sandbox accounts per address block per
 * day, disposable addresses, and the crawl budget of a sandbox audit.
 */
import assert from "node:assert/strict";
import { crawlLimitsFor } from "../../domain/billing/catalog.ts";
import { ConfigError, loadConfig } from "../../config.ts";
import { addressBlock, isDisposableEmail } from "../../domain/identity/signup_limits.ts";
import { keys } from "../../kv/keys.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import { errorCode, freshIp, startTestApp, type TestApp, withApp } from "../helpers/app.ts";
import { grantCredits } from "../helpers/credits.ts";

let n = 0;
function signup(app: TestApp, ip: string, email = `limits${++n}@example.com`) {
  return app.req("POST", "/v1/accounts", { body: { email }, ip });
}

Deno.test("the per-IP signup rate is the operator's (default 5 per hour)", () =>
  withApp(async (app) => {
    const ip = freshIp();
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await signup(app, ip)).status);
    assert.deepEqual(statuses, [201, 201, 429]);
    assert.equal((await signup(app, freshIp())).status, 201);
  }, { env: { SIGNUP_RATE_PER_IP_PER_HOUR: "2" } }));

Deno.test("a global signup rate holds whatever the addresses", () =>
  withApp(async (app) => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await signup(app, freshIp())).status);
    assert.deepEqual(statuses, [201, 201, 201, 429]);
    const refused = await signup(app, freshIp());
    assert.equal(errorCode(refused), "rate_limited");
    assert.match(refused.headers.get("retry-after") ?? "", /^\d+$/);
    app.clock.advance(3_600_000);
    assert.equal((await signup(app, freshIp())).status, 201);
  }, { env: { SIGNUP_RATE_GLOBAL_PER_HOUR: "3" } }));

Deno.test("sandbox accounts per address block per day: rotating addresses in a /24 or /48 does not help", () =>
  withApp(async (app) => {
    const v4 = ["192.0.2.10", "192.0.2.11", "192.0.2.12"];
    assert.deepEqual(
      [await signup(app, v4[0]), await signup(app, v4[1]), await signup(app, v4[2])]
        .map((r) => r.status),
      [201, 201, 429],
    );
    const refused = await signup(app, "192.0.2.99");
    assert.equal(errorCode(refused), "rate_limited");
    assert.match(refused.body.error.message, /this network today/);
    assert.equal(refused.headers.get("retry-after"), String(12 * 3600), "until UTC midnight");
    assert.equal((await signup(app, "192.0.3.10")).status, 201, "another block");

    const v6 = ["2001:db8:7:1::1", "2001:db8:7:2::1", "2001:db8:7:ffff::1"];
    assert.deepEqual(
      [await signup(app, v6[0]), await signup(app, v6[1]), await signup(app, v6[2])]
        .map((r) => r.status),
      [201, 201, 429],
    );
    // The next UTC day the block may open accounts again.
    app.clock.advance(12 * 3600 * 1000);
    assert.equal((await signup(app, "192.0.2.13")).status, 201);
  }, { env: { SIGNUP_SANDBOXES_PER_BLOCK_PER_DAY: "2" } }));

Deno.test("the per-block cap is exact under concurrent signups (one commit with the account)", () =>
  withApp(async (app) => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => signup(app, `198.18.5.${i + 1}`)),
    );
    assert.equal(results.filter((r) => r.status === 201).length, 3);
    assert.equal(results.filter((r) => r.status === 429).length, 5);
    const day = Math.floor(app.clock.now() / 86_400_000) * 86_400_000;
    assert.equal((await app.kv.get(keys.signupBlock("198.18.5.0/24", day))).value, 3);
  }, { env: { SIGNUP_SANDBOXES_PER_BLOCK_PER_DAY: "3" } }));

Deno.test("address blocks: IPv4 /24, IPv6 /48, mapped IPv4 as IPv4", () => {
  assert.equal(addressBlock("203.0.113.77"), "203.0.113.0/24");
  assert.equal(addressBlock("2001:db8:abcd:12::1"), "2001:db8:abcd::/48");
  assert.equal(addressBlock("::ffff:203.0.113.77"), "203.0.113.0/24");
  assert.equal(addressBlock("unknown"), "unknown");
});

Deno.test("disposable addresses: accepted by default, refused when the operator says so", async () => {
  assert.ok(isDisposableEmail("a@mailinator.com"));
  assert.ok(isDisposableEmail("a@inbox.yopmail.com"), "subdomains count");
  assert.ok(!isDisposableEmail("a@example.com"));
  assert.ok(isDisposableEmail("a@burner.example", ["burner.example"]));

  await withApp(async (app) => {
    assert.equal((await signup(app, freshIp(), "agent@mailinator.com")).status, 201);
  });
  await withApp(async (app) => {
    for (const email of ["agent@mailinator.com", "agent@x.yopmail.com", "agent@burner.example"]) {
      const res = await signup(app, freshIp(), email);
      assert.equal(res.status, 400, email);
      assert.equal(errorCode(res), "invalid_request");
      assert.match(res.body.error.message, /^email: /);
    }
    assert.equal((await signup(app, freshIp(), "agent@example.com")).status, 201);
  }, {
    env: { SIGNUP_DISPOSABLE_EMAILS: "refuse", SIGNUP_DISPOSABLE_DOMAINS: "burner.example" },
  });
});

Deno.test("malformed abuse settings stop the server at start, naming the variable", () => {
  for (
    const [name, value] of [
      ["SIGNUP_RATE_PER_IP_PER_HOUR", "five"],
      ["SIGNUP_RATE_GLOBAL_PER_HOUR", "0"],
      ["SIGNUP_SANDBOXES_PER_BLOCK_PER_DAY", "-1"],
      ["SIGNUP_DISPOSABLE_EMAILS", "maybe"],
      ["SIGNUP_DISPOSABLE_DOMAINS", "not a domain"],
      ["SANDBOX_CRAWL_MAX_PAGES", "lots"],
      ["SANDBOX_CRAWL_MAX_BYTES", "10"],
      ["SANDBOX_CRAWL_MAX_SECONDS", "1.5"],
      ["ACCOUNT_RATE_LIMIT_PER_MINUTE", "x"],
      ["REQUEST_BODY_TIMEOUT_MS", "1"],
    ]
  ) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (err: unknown) => err instanceof ConfigError && err.variable === name,
      name,
    );
  }
});

Deno.test("crawl limits are one catalogue rule: sandbox small, standard, pro five times the pages", () => {
  const config = loadConfig({ CRAWL_MAX_PAGES: "200", CRAWL_CONCURRENCY: "4" });
  assert.deepEqual(crawlLimitsFor("sandbox", config), {
    maxPages: 25,
    maxBytes: 10 * 1024 * 1024,
    maxDurationMs: 120_000,
    concurrency: 2,
  });
  assert.equal(crawlLimitsFor("standard", config).maxPages, 200);
  assert.equal(crawlLimitsFor("pro", config).maxPages, 1000);
  // The crawl runs as leased steps, so a paid budget may outlast one lease; bytes follow pages.
  assert.equal(
    crawlLimitsFor("pro", config).maxBytes,
    5 * crawlLimitsFor("standard", config).maxBytes,
  );
  const big = loadConfig({ CRAWL_MAX_PAGES: "100000" });
  assert.equal(crawlLimitsFor("pro", big).maxPages, 100_000, "never past the engine's 100,000");
  const tuned = loadConfig({ SANDBOX_CRAWL_MAX_PAGES: "3", SANDBOX_CRAWL_MAX_SECONDS: "30" });
  assert.equal(crawlLimitsFor("sandbox", tuned).maxPages, 3);
  assert.equal(crawlLimitsFor("sandbox", tuned).maxDurationMs, 30_000);
});

async function crawled(app: TestApp, key: string, accountId: string, projectId: string) {
  const res = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
  assert.equal(res.status, 202, res.text);
  await waitForAudit(app, key, res.body.audit_id);
  const rec = await app.kv.get<{ status: string; jobsCompleted: number }>(
    keys.audit(accountId, res.body.audit_id),
  );
  assert.equal(rec.value?.status, "completed");
  return rec.value!.jobsCompleted;
}

Deno.test("a sandbox audit crawls within the sandbox budget; a paid one of the same site does not", async () => {
  const paths = ["/", "/p1", "/p2", "/p3", "/p4", "/p5", "/p6"];
  const routes = Object.fromEntries(
    paths.map((p, i) => [p, html(page({ title: `Budget page ${i}`, key: p, links: paths }))]),
  );
  const site = serveSite(routes);
  const app = await startTestApp({
    env: { SANDBOX_CRAWL_MAX_PAGES: "3", CRAWL_MAX_PAGES: "50" },
  });
  try {
    const { key, accountId } = await app.signup();
    const sandboxProject = await app.req("POST", "/v1/projects", {
      key,
      body: { url: site.origin },
    });
    assert.ok(await crawled(app, key, accountId, sandboxProject.body.project_id) <= 3);

    const live = await app.liveKey(accountId);
    await grantCredits(app, accountId, 25);
    const paid = await app.req("POST", "/v1/projects", {
      key: live,
      body: { url: site.url("/p1") },
    });
    assert.ok(await crawled(app, live, accountId, paid.body.project_id) >= 7);
  } finally {
    await app.close();
    await site.close();
  }
});
