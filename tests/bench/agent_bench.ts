/**
 * Issue 33's context budget: `deno task bench agent` runs the scripted agent session of
 * tests/mcp/agent_session.ts over `/mcp` with a live key (tools/list, a project, an audit of a
 * 34-URL loopback site and its wait, the summary, the worst issue's first page, an inventory page,
 * a re-check and its wait, a share link) on both protocol revisions, and prints the bytes and
 * tokens (gpt-tokenizer, o200k) a host puts in the model's context, per step and in total, beside
 * the figures measured on this branch before issue 33 (BEFORE, same script, 2026-11-28).
 * Targets: tools/list ≤ 16 KB, the whole session ≤ 48 KB.
 */
import { startTestApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { connectMcp, type Era } from "../mcp/helpers.ts";
import {
  formatFigures,
  runSession,
  SESSION_BUDGET,
  sessionSite,
  TOOLS_LIST_BUDGET,
} from "../mcp/agent_session.ts";

/** Bytes and tokens before issue 33 (commit 389559c), per revision: tools/list and session. */
const BEFORE: Record<string, { list: [number, number]; session: [number, number] }> = {
  "modern": { list: [63_181, 15_772], session: [121_856, 34_879] },
  "2025-11-25": { list: [63_181, 15_760], session: [121_856, 34_796] },
};

const site = sessionSite();
const app = await startTestApp({ env: { SERVICE_ROLE: "all" } });
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
try {
  for (const era of ["modern", "2025-11-25"] as Era[]) {
    const { live } = await liveWithCredits(app, 1000);
    const client = await connectMcp(app, { key: live, era });
    try {
      const f = await runSession(client, site.origin);
      console.log(
        formatFigures(`session over ${era === "modern" ? "2026-07-28" : era}`, f)
          .join("\n"),
      );
      const list = f.steps[0];
      const before = BEFORE[era];
      if (before) {
        console.log(
          `  before issue 33: tools/list ${kb(before.list[0])} ${before.list[1]} tok; session ` +
            `${kb(before.session[0])} ${before.session[1]} tok`,
        );
      }
      console.log(
        `  tools/list ${kb(list.bytes)} (budget ${kb(TOOLS_LIST_BUDGET)}: ${
          list.bytes <= TOOLS_LIST_BUDGET ? "held" : "OVER"
        }); session ${kb(f.totalBytes)} (budget ${kb(SESSION_BUDGET)}: ${
          f.totalBytes <= SESSION_BUDGET ? "held" : "OVER"
        })`,
      );
      console.log(
        "  per tool: " + f.tools.map((t) => `${t.name} ${kb(t.bytes)}/${t.tokens} tok`).join(", "),
      );
    } finally {
      await client.close();
    }
  }
} finally {
  await app.close();
  await site.close();
}
