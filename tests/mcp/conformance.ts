/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`, server mode) and
 * the MCP Inspector CLI (`@modelcontextprotocol/inspector-cli`) against the running service, and
 * prints each scenario's outcome with why a failing check does not apply to a server like ours.
 *
 *   deno task mcp:conformance
 *
 * The suite runs once per revision served, with `--requirements <revision>`: exactly the server
 * scenarios that revision requires, frozen at its release, plus those it runs without scoring
 * (the tasks extension's among them). Authorization-server scenarios are not part of a revision's
 * server requirements. Needs the npm registry (the packages are fetched on first use): the suite
 * runs on Deno's npm support (it wants Node >= 22, which Deno satisfies); the Inspector CLI
 * spawns `node`, so it is installed into a temporary prefix and run with the machine's Node.
 */
import { spawnServer, stop } from "../bench/load.ts";
import { freePort } from "../helpers/ports.ts";

const CONFORMANCE = "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12";
const REVISIONS = ["2026-07-28", "2025-11-25"];
const INSPECTOR = "@modelcontextprotocol/inspector-cli@1.0.3";

/**
 * A failing check that needs one of the suite's reference-server fixtures (`test_simple_text`,
 * `test://static-text`, `greet`, `slow_compute`, …), which a real server does not have.
 */
const FIXTURE =
  /Tool \S+ not found|does not list the diagnostic tool|Not testable|fixture|test_\w+/;

/** Why the other failing scenarios do not apply here, by scenario. */
const NOT_APPLICABLE: Record<string, string> = {
  "logging-set-level": "no logging capability: MCP logging is deprecated in 2026-07-28 (SEP-2577)",
  "completion-complete":
    "no completion capability: no prompt or resource argument has a finite set",
  "resources-subscribe": "no subscriptions: stateless, nothing to push to",
  "resources-unsubscribe": "no subscriptions",
  "server-stateless": "the subscription checks need subscriptions/listen, which this server " +
    "refuses (it pushes nothing); the others call the suite's diagnostic tools",
  "json-schema-2020-12": "fixture tool json_schema_2020_12_tool (our schemas are 2020-12)",
  "resources-read-text": "fixture resource test://static-text",
  "resources-read-binary": "fixture resource test://static-binary",
  "resources-templates-read": "fixture template test://template/{id}/data",
  "tools-call-with-logging": "fixture tool test_tool_with_logging, and no logging capability",
  "input-required-result-multi-round": "fixture tool; no tool of ours asks the client for input",
  "input-required-result-tampered-state":
    "fixture tool; no tool of ours returns input_required or request state",
  "tasks-required-task-error": "fixture tool failing_job; no tool of ours requires a task " +
    "(a client without the extension gets the start-and-poll answer)",
  "http-custom-header-server-validation":
    "fixture tools declaring x-mcp-header parameters; no tool of ours declares one",
};

const kvDir = await Deno.makeTempDir();
const outDir = await Deno.makeTempDir();
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const child = await spawnServer(new URL("../../main.ts", import.meta.url).pathname, {
  PORT: String(port),
  HOST: "127.0.0.1",
  KV_PATH: `${kvDir}/kv.sqlite`,
}, `${base}/v1/plans`);

async function run(cmd: string, args: string[], cwd?: string) {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

/** One line per scenario: PASS, n/a (each failing check explained), or FAIL. */
async function report(revision: string, dir: string) {
  let passed = 0, notApplicable = 0, failed = 0;
  const dirs = [];
  for await (const e of Deno.readDir(dir)) if (e.isDirectory) dirs.push(e.name);
  for (const name of dirs.sort()) {
    const checks: { id: string; status: string; errorMessage?: string }[] = JSON.parse(
      await Deno.readTextFile(`${dir}/${name}/checks.json`).catch(() => "[]"),
    );
    const scenario = name.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
    const bad = checks.filter((c) => c.status === "FAILURE");
    const ok = checks.filter((c) => c.status === "SUCCESS").length;
    const unexplained = bad.filter((c) =>
      !FIXTURE.test(c.errorMessage ?? "") && !NOT_APPLICABLE[scenario]
    );
    let status: string;
    if (bad.length === 0) {
      status = "PASS";
      passed++;
    } else if (unexplained.length === 0) {
      status = "n/a ";
      notApplicable++;
    } else {
      status = "FAIL";
      failed++;
    }
    const why = unexplained.length
      ? ` ${unexplained.map((c) => `${c.id}: ${c.errorMessage}`).join("; ")}`
      : bad.length
      ? ` (${NOT_APPLICABLE[scenario] ?? "needs the suite's fixture tools"})`
      : "";
    console.log(`conformance ${revision}: ${status} ${scenario}: ${ok}/${checks.length}${why}`);
  }
  console.log(
    `conformance ${revision}: ${passed} pass, ${notApplicable} not applicable, ${failed} fail`,
  );
}

try {
  for (const revision of REVISIONS) {
    const out = `${outDir}/${revision}`;
    console.log(`conformance: ${CONFORMANCE} server --requirements ${revision}`);
    await run(Deno.execPath(), [
      "run",
      "-A",
      // The suite and its dependencies stay out of the project's lock file.
      "--no-lock",
      CONFORMANCE,
      "server",
      "--url",
      `${base}/mcp`,
      "--requirements",
      revision,
      "-o",
      out,
    ]);
    await report(revision, out);
  }

  // The Inspector CLI: list and call with and without a key.
  const prefix = await Deno.makeTempDir();
  const install = await run("npm", [
    "install",
    "--silent",
    "--no-audit",
    "--no-fund",
    "--prefix",
    prefix,
    INSPECTOR,
  ]);
  if (install.code !== 0) throw new Error("npm install of the Inspector CLI failed");
  const build = `${prefix}/node_modules/@modelcontextprotocol/inspector-cli/build`;
  const signup = await fetch(`${base}/v1/accounts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "inspector@example.com" }),
  }).then((r) => r.json());
  const auth = ["--header", `Authorization: Bearer ${signup.api_key}`];
  const inspect = async (label: string, args: string[], check: (out: string) => boolean) => {
    // The CLI reads its own package.json relative to the working directory.
    const r = await run("node", ["index.js", "--transport", "http", `${base}/mcp`, ...args], build);
    let ok = false;
    try {
      ok = check(r.stdout);
    } catch { /* not the expected output */ }
    console.log(`inspector: ${ok ? "PASS" : "FAIL"} ${label}`);
  };
  await inspect(
    "tools/list without a key: signup, billing, docs",
    ["--method", "tools/list"],
    (o) =>
      JSON.stringify(JSON.parse(o).tools.map((t: { name: string }) => t.name)) ===
        '["signup","billing","docs"]',
  );
  await inspect(
    "tools/list with a key: 10 tools",
    [...auth, "--method", "tools/list"],
    (o) => JSON.parse(o).tools.length === 10,
  );
  await inspect(
    "tools/call account",
    [...auth, "--method", "tools/call", "--tool-name", "account"],
    (o) => JSON.parse(o).structuredContent.account_id === signup.account_id,
  );
  await inspect(
    "tools/call projects action=create without url: a tool error with invalid_request",
    [...auth, "--method", "tools/call", "--tool-name", "projects", "--tool-arg", "action=create"],
    (o) => JSON.parse(o).isError === true && o.includes("invalid_request"),
  );
  await inspect(
    "resources/list",
    [...auth, "--method", "resources/list"],
    (o) => JSON.parse(o).resources.length === 2,
  );
  await inspect(
    "prompts/list",
    ["--method", "prompts/list"],
    (o) => JSON.parse(o).prompts.length === 2,
  );
  await Deno.remove(prefix, { recursive: true }).catch(() => {});
} finally {
  await stop(child);
  await Deno.remove(kvDir, { recursive: true }).catch(() => {});
  await Deno.remove(outDir, { recursive: true }).catch(() => {});
}
