/**
 * `/mcp` driven by the MCP SDK's own client over HTTP against the real app: the protocol eras,
 * what is listed with and without a key, and the whole agent flow through tools only.
 */
import assert from "node:assert/strict";
import { startFakeStripe, stripeEnv } from "../billing/fake_stripe.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import { withApp } from "../helpers/app.ts";
import { call, callError, callText, connectMcp, type Era, postMcp } from "./helpers.ts";

const PUBLIC_TOOLS = ["signup", "billing", "docs"];
const ALL_TOOLS = [
  "signup",
  "account",
  "api_keys",
  "projects",
  "audits",
  "schedule",
  "articles",
  "billing",
  "webhooks",
  "docs",
];

Deno.test("initialize in 2026-07-28, 2025-11-25 and 2025-06-18; a key unlocks the keyed tools", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    for (const era of ["modern", "2025-11-25", "2025-06-18"] as Era[]) {
      const anon = await connectMcp(app, { era });
      try {
        assert.equal(anon.getProtocolEra(), era === "modern" ? "modern" : "legacy");
        assert.equal(
          anon.getNegotiatedProtocolVersion(),
          era === "modern" ? "2026-07-28" : era,
        );
        assert.equal(anon.getServerVersion()?.name, "serpwright");
        assert.match(anon.getInstructions() ?? "", /Authorization: Bearer/);
        const tools = (await anon.listTools()).tools;
        assert.deepEqual(tools.map((t) => t.name), PUBLIC_TOOLS, era);
        // Without a key, billing offers the public plans only.
        const billing = tools.find((t) => t.name === "billing")!;
        // deno-lint-ignore no-explicit-any
        assert.deepEqual((billing.inputSchema.properties as any).action.enum, ["plans"]);
        const plans = await call(anon, "billing", { action: "plans" });
        assert.deepEqual(plans.plans.map((p: { id: string }) => p.id), ["basic", "pro"]);
      } finally {
        await anon.close();
      }

      const keyed = await connectMcp(app, { era, key });
      try {
        const tools = (await keyed.listTools()).tools;
        assert.deepEqual(tools.map((t) => t.name), ALL_TOOLS, era);
        for (const t of tools) {
          assert.ok(t.description && t.description.length > 40, `${t.name} has a description`);
          assert.equal(t.inputSchema.type, "object");
          // No output schemas (issue 33): structuredContent is the /v1 body, documented there.
          assert.equal(t.outputSchema, undefined, `${t.name} lists no output schema`);
        }
        const account = await call(keyed, "account");
        assert.equal(account.mode, "sandbox");
      } finally {
        await keyed.close();
      }
    }
    // Stateless: nothing pins a client to a process.
    const res = await postMcp(app, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "raw", version: "1" },
      },
    }, { "mcp-protocol-version": "2025-11-25" });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("mcp-session-id"), null);
    assert.ok(res.headers.get("x-request-id"));
    assert.equal(res.headers.get("x-ratelimit-limit"), "600");
  }));

Deno.test("the agent flow through tools only: signup → project → audit → article → checkout", async () => {
  const fake = await startFakeStripe();
  const site = serveSite({
    "/": html(page({ title: "Home of the test site", links: ["/a", "/b"] })),
    "/a": html(page({ title: "Page A of the test site", key: "a" })),
    "/b": html(page({ title: "Page B of the test site", key: "b", viewport: null })),
  });
  try {
    await withApp(async (app) => {
      const anon = await connectMcp(app);
      const signup = await call(anon, "signup", { email: "flow@example.com" });
      await anon.close();
      assert.match(signup.api_key, /^sk_sandbox_/);
      assert.equal(signup.connect.url, `${app.service.services.deps.config.publicBaseUrl}/mcp`);
      assert.equal(signup.connect.headers.Authorization, `Bearer ${signup.api_key}`);

      const agent = await connectMcp(app, { key: signup.api_key });
      try {
        const project = await call(agent, "projects", { action: "create", url: site.origin });
        assert.equal(project.sandbox, true);
        const listed = await call(agent, "projects", { action: "list" });
        assert.deepEqual(listed.projects.map((p: { project_id: string }) => p.project_id), [
          project.project_id,
        ]);

        // Start returns at once with the id and a poll hint.
        const started = await call(agent, "audits", {
          action: "start",
          project_id: project.project_id,
        });
        assert.match(started.audit_id, /^aud_/);
        assert.ok(["queued", "running"].includes(started.status));
        assert.equal(started.poll, `/v1/audits/${started.audit_id}`);
        assert.ok(started.poll_after_seconds >= 2 && started.poll_after_seconds <= 60);
        // wait holds the call and reports progress until the audit completes.
        const progress: { progress: number; total?: number; message?: string }[] = [];
        const res = await agent.callTool(
          {
            name: "audits",
            arguments: { action: "get", audit_id: started.audit_id, wait: 30 },
          },
          { onprogress: (p) => void progress.push(p) },
        );
        assert.ok(!res.isError, JSON.stringify(res.content));
        // deno-lint-ignore no-explicit-any
        const audit = res.structuredContent as any;
        assert.equal(audit.status, "completed");
        assert.ok(Number.isInteger(audit.score));
        assert.ok(
          audit.summary.top_issues.some((t: { check: string }) => t.check === "viewport_missing"),
        );
        if (started.status !== "completed") {
          assert.ok(progress.length >= 1, "progress notifications while waiting");
          assert.equal(progress.at(-1)!.progress, 2);
          for (let i = 1; i < progress.length; i++) {
            assert.ok(progress[i].progress > progress[i - 1].progress);
          }
        }
        // The same audit over REST: one contract.
        const rest = await app.req("GET", `/v1/audits/${audit.audit_id}`, {
          key: signup.api_key,
        });
        assert.deepEqual(audit, rest.body);
        // The audit as a resource.
        const read = await agent.readResource({ uri: `serpwright://audits/${audit.audit_id}` });
        // deno-lint-ignore no-explicit-any
        assert.equal(JSON.parse((read.contents[0] as any).text).score, audit.score);

        const article = await call(agent, "articles", {
          action: "start",
          project_id: project.project_id,
          topic: "How to choose running shoes",
          wait: 30,
        });
        assert.equal(article.status, "ready", JSON.stringify(article));
        assert.ok(article.content_markdown.length > 200);
        assert.equal(article.watermark.sandbox, true);

        // The trial cannot buy: the tool error says so, with the API's code.
        const refused = await callError(agent, "billing", {
          action: "buy_credits",
          pack_id: "pack_500",
        });
        assert.equal(refused.code, "sandbox_not_billable");
        const me = await call(agent, "account");
        assert.deepEqual(me.sandbox_usage, { audits: 1, articles: 1 });
      } finally {
        await agent.close();
      }

      // A human upgraded; the operator minted a live key: the agent buys credits through a link.
      const liveKey = await app.liveKey(signup.account_id);
      const live = await connectMcp(app, { key: liveKey });
      try {
        const balance = await call(live, "billing", { action: "credits" });
        assert.equal(balance.balance_credits, 0);
        const short = await callError(live, "audits", {
          action: "start",
          project_id: (await call(live, "projects", { action: "list" })).projects[0].project_id,
        });
        assert.equal(short.code, "insufficient_credits");
        assert.equal(short.body.required_credits, 25);
        assert.match(short.text, /buy_credits/);
        const bought = await call(live, "billing", {
          action: "buy_credits",
          pack_id: "pack_500",
          idempotency_key: "buy-1",
        });
        assert.equal(bought.status, "pending_payment");
        assert.match(bought.checkout_url, /^https:\/\//);
        assert.equal(bought.credits, 500);
        assert.equal(fake.requests.filter((r) => r.path === "/v1/checkout/sessions").length, 1);
      } finally {
        await live.close();
      }
    }, { env: { ...stripeEnv(fake) } });
  } finally {
    await site.close();
    await fake.close();
  }
});

Deno.test("docs, resources and prompts help an agent without a key", () =>
  withApp(async (app) => {
    const anon = await connectMcp(app);
    try {
      const docs = await callText(anon, "docs", { topic: "connect" });
      assert.match(docs.text, /"Authorization": "Bearer sk_sandbox_\.\.\."/);
      assert.equal(docs.structured.markdown, undefined, "the Markdown is sent once, as the text");
      const resources = (await anon.listResources()).resources.map((r) => r.uri);
      assert.deepEqual(resources, ["serpwright://docs/quickstart", "serpwright://docs/errors"]);
      const errors = await anon.readResource({ uri: "serpwright://docs/errors" });
      // deno-lint-ignore no-explicit-any
      assert.match((errors.contents[0] as any).text, /\| `insufficient_credits` \| 402 \|/);
      const prompts = (await anon.listPrompts()).prompts.map((p) => p.name);
      assert.deepEqual(prompts, ["audit_site", "write_article"]);
      const prompt = await anon.getPrompt({
        name: "audit_site",
        arguments: { url: "https://x.io" },
      });
      // deno-lint-ignore no-explicit-any
      assert.match((prompt.messages[0].content as any).text, /Audit https:\/\/x\.io/);
    } finally {
      await anon.close();
    }
  }));
