/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`, server mode) and
 * the MCP Inspector CLI (`@modelcontextprotocol/inspector-cli`) against the running service, and
 * prints each scenario's outcome with why a failing one does not apply to a server like ours.
 *
 *   deno task mcp:conformance
 *
 * Needs the npm registry (the packages are fetched on first use): the suite runs on Deno's npm
 * support (it wants Node >= 22, which Deno satisfies); the Inspector CLI spawns `node`, so it is
 * installed into a temporary prefix and run with the machine's Node.
 */
import { freePort, spawnServer, stop } from "../bench/load.ts";

const CONFORMANCE = "npm:@modelcontextprotocol/conformance@0.1.16";
const INSPECTOR = "@modelcontextprotocol/inspector-cli@1.0.3";

/**
 * The suite's scenarios call fixture tools, resources and prompts of its reference server
 * (`test_simple_text`, `test://static-text`, `test_simple_prompt`, …) or optional capabilities.
 * Why each failing one does not apply here.
 */
const NOT_APPLICABLE: Record<string, string> = {
  "logging-set-level": "no logging capability: MCP logging is deprecated in 2026-07-28 (SEP-2577)",
  "completion-complete":
    "no completion capability: no prompt or resource argument has a finite set",
  "tools-call-simple-text": "calls the fixture tool test_simple_text, which is not ours",
  "tools-call-image": "fixture tool test_image_content; no tool of ours returns images",
  "tools-call-audio": "fixture tool test_audio_content; no tool of ours returns audio",
  "tools-call-embedded-resource": "fixture tool test_embedded_resource",
  "tools-call-mixed-content": "fixture tool test_multiple_content_types",
  "tools-call-with-logging": "fixture tool test_tool_with_logging (and logging, see above)",
  "tools-call-error": "fixture tool test_error_handling (our tool errors are tested in tests/mcp)",
  "tools-call-with-progress": "fixture tool test_tool_with_progress (our progress is tested in " +
    "tests/mcp/flow.test.ts)",
  "tools-call-sampling": "fixture tool; we never ask the client's model to sample",
  "tools-call-elicitation": "fixture tool; we never elicit input from the user",
  "elicitation-sep1034-defaults": "fixture tool; no elicitation",
  "elicitation-sep1330-enums": "fixture tool; no elicitation",
  "json-schema-2020-12": "fixture tool json_schema_2020_12_tool (our schemas are 2020-12)",
  "server-sse-polling": "stateless: no session or GET stream to resume; Deno Deploy-friendly",
  "resources-read-text": "fixture resource test://static-text",
  "resources-read-binary": "fixture resource test://static-binary",
  "resources-templates-read": "fixture template test://template/{id}/data",
  "resources-subscribe": "no subscriptions: stateless, nothing to push to",
  "resources-unsubscribe": "no subscriptions",
  "prompts-get-simple": "fixture prompt test_simple_prompt",
  "prompts-get-with-args": "fixture prompt test_prompt_with_arguments",
  "prompts-get-embedded-resource": "fixture prompt test_prompt_with_embedded_resource",
  "prompts-get-with-image": "fixture prompt test_prompt_with_image",
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

try {
  console.log(`conformance: ${CONFORMANCE} server --url ${base}/mcp`);
  await run(Deno.execPath(), [
    "run",
    "-A",
    // The suite and its dependencies stay out of the project's lock file.
    "--no-lock",
    CONFORMANCE,
    "server",
    "--url",
    `${base}/mcp`,
    "-o",
    outDir,
  ]);
  let passed = 0, failed = 0, skipped = 0;
  const dirs = [];
  for await (const e of Deno.readDir(outDir)) if (e.isDirectory) dirs.push(e.name);
  for (const dir of dirs.sort()) {
    const checks: { id: string; status: string; errorMessage?: string }[] = JSON.parse(
      await Deno.readTextFile(`${outDir}/${dir}/checks.json`).catch(() => "[]"),
    );
    const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
    const bad = checks.filter((c) => c.status === "FAILURE");
    const ok = checks.filter((c) => c.status === "SUCCESS").length;
    if (checks.length === 0 || (bad.length === 0 && ok === 0)) skipped++;
    else if (bad.length === 0) passed++;
    else failed++;
    const status = checks.length === 0 || (bad.length === 0 && ok === 0)
      ? "n/a "
      : bad.length === 0
      ? "PASS"
      : "FAIL";
    const why = bad.length ? ` (${NOT_APPLICABLE[scenario] ?? bad[0].errorMessage})` : "";
    console.log(`conformance: ${status} ${scenario}: ${ok}/${checks.length} checks${why}`);
  }
  console.log(`conformance: ${passed} passed, ${failed} failed, ${skipped} without checks`);

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
