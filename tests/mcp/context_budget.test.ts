/**
 * Issue 33's context budget, held: the scripted agent session of agent_session.ts (the same one
 * `deno task bench agent` measures) runs with the SDK client on both protocol revisions; every
 * step succeeds, `tools/list` stays within 16 KB with every capability listed, the session within
 * 48 KB, and each tool's description and schema within its own budget. A tool that grows past
 * its budget fails here: shorten it, or raise the budget on purpose in the same change.
 */
import assert from "node:assert/strict";
import { withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { runSession, SESSION_BUDGET, sessionSite, TOOLS_LIST_BUDGET } from "./agent_session.ts";
import { connectMcp, type Era } from "./helpers.ts";

const KB = 1024;
/** Each tool's JSON in tools/list (name, title, description, input schema, annotations). */
const TOOL_BUDGETS: Record<string, number> = {
  signup: 1.2 * KB,
  account: 0.7 * KB,
  api_keys: 1.4 * KB,
  projects: 1.5 * KB,
  audits: 5 * KB,
  schedule: 2.6 * KB,
  articles: 2.1 * KB,
  billing: 1.6 * KB,
  webhooks: 1.5 * KB,
  docs: 0.8 * KB,
};
/** What one answer of the session may put in the context, text and structured together. */
const STEP_BUDGET = 10 * KB;

/** Every action each tool must still offer (nothing dropped to fit the budget). */
const CAPABILITIES: Record<string, string[]> = {
  api_keys: ["list", "create", "revoke", "list_apps", "revoke_app"],
  projects: ["create", "list", "get"],
  audits: [
    "start",
    "get",
    "summary",
    "issues",
    "issue",
    "pages",
    "fixes",
    "redirects",
    "recheck",
    "recheck_get",
    "report",
    "share",
    "shares",
    "revoke_share",
  ],
  schedule: ["get", "set", "delete"],
  articles: ["start", "get", "share", "shares", "revoke_share"],
  billing: ["plans", "credits", "buy_credits", "subscribe", "subscription"],
  webhooks: ["create", "list", "delete"],
};

for (const era of ["modern", "2025-11-25"] as Era[]) {
  Deno.test(`context budget (${era}): tools/list ≤ 16 KB, the agent session ≤ 48 KB`, async () => {
    const site = sessionSite();
    try {
      await withApp(async (app) => {
        const { live } = await liveWithCredits(app, 1000);
        const client = await connectMcp(app, { key: live, era });
        try {
          const figures = await runSession(client, site.origin, (step, res) => {
            // deno-lint-ignore no-explicit-any
            const text = (res.content as any[]).map((c) => c.text).join("\n");
            assert.ok(!text.includes('{"'), `${step}: the text repeats JSON: ${text}`);
            assert.match(text, /\nREST: (GET|POST|PUT|DELETE) http/, `${step} names its REST twin`);
            // A listing's first page says what is left and how to get it.
            if (step.includes("page 1") && res.structuredContent.next_cursor) {
              assert.match(text, /(\d+ more|More): call again with cursor \S+/, step);
              assert.ok(res.structuredContent.data.length <= 10, `${step}: a small page`);
            }
            if (step === "audits issue (page 1)") assert.match(text, /\d+ more: /, step);
            // The inventory's first page knows its size from the page groups.
            if (step === "audits pages (page 1)") {
              const { total_count, data } = res.structuredContent;
              assert.ok(total_count > data.length, `${step}: total_count ${total_count}`);
              assert.match(text, new RegExp(`${total_count - data.length} more: `), step);
            }
          });
          const list = figures.steps[0];
          assert.ok(
            list.bytes <= TOOLS_LIST_BUDGET,
            `tools/list is ${list.bytes} bytes, over ${TOOLS_LIST_BUDGET}`,
          );
          assert.ok(
            figures.totalBytes <= SESSION_BUDGET,
            `the session is ${figures.totalBytes} bytes, over ${SESSION_BUDGET}: ` +
              JSON.stringify(figures.steps.map((s) => [s.step, s.bytes])),
          );
          for (const s of figures.steps.slice(1)) {
            assert.ok(s.bytes <= STEP_BUDGET, `${s.step}: ${s.bytes} bytes, over ${STEP_BUDGET}`);
          }
          for (const t of figures.tools) {
            const budget = TOOL_BUDGETS[t.name];
            assert.ok(budget, `${t.name} has no budget here: give it one`);
            assert.ok(t.bytes <= budget, `${t.name} is ${t.bytes} bytes, over ${budget}`);
          }
          // Every capability is still reachable from the list.
          const tools = (await client.listTools()).tools;
          for (const [name, actions] of Object.entries(CAPABILITIES)) {
            const tool = tools.find((t) => t.name === name);
            assert.ok(tool, `${name} is listed`);
            // deno-lint-ignore no-explicit-any
            const offered = (tool.inputSchema.properties as any).action.enum as string[];
            for (const a of actions) assert.ok(offered.includes(a), `${name} offers ${a}`);
          }
        } finally {
          await client.close();
        }
      });
    } finally {
      await site.close();
    }
  });
}
