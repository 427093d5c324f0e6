/**
 * Runs the agent session of tests/mcp/agent_session.ts in this checkout on both protocol
 * revisions and prints its figures as one JSON line. `agent_bench.ts` runs it here and in an
 * export of the commit before issue 33 (copied in beside that commit's own app), so both sides
 * are measured by the same script in the same run.
 */
import { startTestApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { connectMcp, type Era } from "../mcp/helpers.ts";
import { runSession, sessionSite } from "../mcp/agent_session.ts";

const site = sessionSite();
const app = await startTestApp({ env: { SERVICE_ROLE: "all" } });
const out: Record<string, unknown> = {};
try {
  for (const era of ["modern", "2025-11-25"] as Era[]) {
    const { live } = await liveWithCredits(app, 1000);
    const client = await connectMcp(app, { key: live, era });
    try {
      out[era] = await runSession(client, site.origin);
    } finally {
      await client.close();
    }
  }
} finally {
  await app.close();
  await site.close();
}
console.log(`AGENT_FIGURES ${JSON.stringify(out)}`);
