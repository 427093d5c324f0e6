/**
 * The upgrade over MCP: the billing tool's `upgrade` and `upgrade_status` actions run the same
 * operations as `/v1` (a sandbox key starts, a human pays, one status answer carries the live
 * key), and what they add to `tools/list` stays small (measured here, and held under a budget).
 */
import assert from "node:assert/strict";
import { call, connectMcp } from "../mcp/helpers.ts";
import { newProject, withBilling } from "../billing/helpers.ts";
import { completeCheckout, humanChooses, paidLastSession } from "./helpers.ts";

/** The billing tool's entry in tools/list, in bytes: 10,351 with the three actions (+617). */
const BILLING_TOOL_BUDGET = 10_600;

Deno.test("over MCP: billing actions upgrade and upgrade_status; the live key once; tools/list stays small", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    await newProject(app, trial.key);
    const c = await connectMcp(app, { key: trial.key });
    try {
      const listed = await c.listTools();
      const billing = listed.tools.find((t) => t.name === "billing")!;
      const bytes = new TextEncoder().encode(JSON.stringify(billing)).length;
      const all = new TextEncoder().encode(JSON.stringify(listed.tools)).length;
      console.log(`tools/list: ${all} bytes for a sandbox key; the billing tool ${bytes}`);
      assert.ok(bytes <= BILLING_TOOL_BUDGET, `billing tool ${bytes} bytes`);

      const upgrade = await call(c, "billing", { action: "upgrade" });
      assert.equal(upgrade.status, "pending");
      assert.match(upgrade.user_code, /^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
      const { checkoutUrl } = await humanChooses(app, upgrade.user_code, { pack: "pack_500" });
      await completeCheckout(app, paidLastSession(fake, checkoutUrl));
      const first = await c.callTool({
        name: "billing",
        arguments: { action: "upgrade_status", upgrade_id: upgrade.upgrade_id },
      });
      const claimed = first.structuredContent as Record<string, string>;
      assert.match(claimed.api_key, /^sk_live_/);
      const text = (first.content as { text: string }[])[0].text;
      assert.match(text, /LIVE KEY \(shown once/);
      const again = await call(c, "billing", {
        action: "upgrade_status",
        upgrade_id: upgrade.upgrade_id,
      });
      assert.equal(again.status, "claimed");
      assert.equal(again.api_key, undefined);
    } finally {
      await c.close();
    }
  }));
