/**
 * Issue 33's context budget: `deno task bench agent` runs the scripted agent session of
 * tests/mcp/agent_session.ts over `/mcp` with a live key (tools/list, a project, an audit of a
 * 34-URL loopback site and its wait, the summary, the worst issue's first page, an inventory page,
 * a re-check and its wait, a share link) on both protocol revisions, and prints the bytes and
 * tokens (gpt-tokenizer, o200k) a host puts in the model's context, per step and in total.
 *
 * Before and after in the same run: the same session script also runs against an export
 * (`git archive`, into a temporary folder; no worktree) of the commit before issue 33
 * (`BENCH_BASELINE_COMMIT`, default 389559c), with this checkout's deno.json and lock. Where git
 * or that commit is not at hand (`BENCH_BASELINE=0` skips it), the figures measured on 2026-11-28
 * (BEFORE) are printed instead. Targets: tools/list ≤ 16 KB, the whole session ≤ 48 KB.
 */
import {
  formatFigures,
  SESSION_BUDGET,
  type SessionFigures,
  TOOLS_LIST_BUDGET,
} from "../mcp/agent_session.ts";

const root = new URL("../../", import.meta.url).pathname;
const ERAS = ["modern", "2025-11-25"];
const label = (era: string) => era === "modern" ? "2026-07-28" : era;
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

/** Measured on 2026-11-28 at 389559c: tools/list and session, [bytes, tokens]. */
const BEFORE: Record<string, { list: [number, number]; session: [number, number] }> = {
  "modern": { list: [63_181, 15_772], session: [121_856, 34_879] },
  "2025-11-25": { list: [63_181, 15_760], session: [121_856, 34_796] },
};

/** Runs agent_session_run.ts in `dir` (a checkout) and reads its figures. */
async function figuresIn(dir: string): Promise<Record<string, SessionFigures>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--unstable-kv",
      "--unstable-cron",
      "--config",
      `${dir}/deno.json`,
      `${dir}/tests/bench/agent_session_run.ts`,
    ],
    cwd: dir,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const line = new TextDecoder().decode(out.stdout).split("\n")
    .find((l) => l.startsWith("AGENT_FIGURES "));
  if (out.code !== 0 || !line) throw new Error(`the session failed in ${dir}`);
  return JSON.parse(line.slice("AGENT_FIGURES ".length));
}

/** The commit before issue 33, exported with this checkout's session script and config. */
async function baseline(): Promise<Record<string, SessionFigures> | null> {
  if (Deno.env.get("BENCH_BASELINE") === "0") return null;
  const commit = Deno.env.get("BENCH_BASELINE_COMMIT") ?? "389559c";
  const dir = await Deno.makeTempDir({ prefix: "serpwright-before-" });
  try {
    const archive = new Deno.Command("sh", {
      args: ["-c", `git -C "${root}" archive "${commit}" | tar -x -C "${dir}"`],
      stderr: "piped",
    });
    const done = await archive.output();
    if (done.code !== 0) {
      console.log(`(no export of ${commit}: ${new TextDecoder().decode(done.stderr).trim()})`);
      return null;
    }
    for (
      const f of [
        "deno.json",
        "deno.lock",
        "tests/mcp/agent_session.ts",
        "tests/bench/agent_session_run.ts",
      ]
    ) await Deno.copyFile(`${root}${f}`, `${dir}/${f}`);
    return await figuresIn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const before = await baseline();
const after = await figuresIn(root.replace(/\/$/, ""));
for (const era of ERAS) {
  const f = after[era];
  if (before) {
    console.log(formatFigures(`before issue 33, over ${label(era)}`, before[era]).join("\n"));
  }
  console.log(formatFigures(`now, over ${label(era)}`, f).join("\n"));
  const list = f.steps[0];
  const b = before
    ? {
      list: [before[era].steps[0].bytes, before[era].steps[0].tokens],
      session: [before[era].totalBytes, before[era].totalTokens],
    }
    : BEFORE[era];
  console.log(
    `  ${before ? "measured in this run" : "recorded 2026-11-28"}: tools/list ${kb(b.list[0])} ` +
      `${b.list[1]} tok -> ${kb(list.bytes)} ${list.tokens} tok; session ${kb(b.session[0])} ` +
      `${b.session[1]} tok -> ${kb(f.totalBytes)} ${f.totalTokens} tok`,
  );
  console.log(
    `  budgets: tools/list ${kb(list.bytes)} of ${kb(TOOLS_LIST_BUDGET)} (${
      list.bytes <= TOOLS_LIST_BUDGET ? "held" : "OVER"
    }); session ${kb(f.totalBytes)} of ${kb(SESSION_BUDGET)} (${
      f.totalBytes <= SESSION_BUDGET ? "held" : "OVER"
    })`,
  );
  console.log(
    "  per tool: " + f.tools.map((t) => `${t.name} ${kb(t.bytes)}/${t.tokens} tok`).join(", "),
  );
}
