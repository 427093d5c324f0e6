/**
 * The process guard (jobs/process_guard.ts): in a child process that installs it, a promise
 * rejected with no handler and an exception thrown from a timer are logged as JSON lines and the
 * process goes on to print "alive" and exit 0. Without the guard the same child dies.
 */
import assert from "node:assert/strict";

const guard = new URL("../../jobs/process_guard.ts", import.meta.url).href;

async function runChild(install: boolean) {
  const script = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(
    script,
    `import { installProcessGuard } from "${guard}";
${install ? "installProcessGuard();" : ""}
Promise.reject(new Error("nobody handles this rejection"));
setTimeout(() => { throw new TypeError("thrown from a timer"); }, 0);
await new Promise((r) => setTimeout(r, 50));
console.log("alive");
`,
  );
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--no-check", script],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    return {
      code: out.code,
      stdout: dec.decode(out.stdout).trim(),
      stderr: dec.decode(out.stderr),
    };
  } finally {
    await Deno.remove(script);
  }
}

Deno.test("process guard: an unhandled rejection and a timer's exception are logged; the process lives", async () => {
  const { code, stdout, stderr } = await runChild(true);
  assert.equal(stdout, "alive", stderr);
  assert.equal(code, 0);
  const lines = stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  // Either may be reported first (rejections are detected after a macrotask, like the timer).
  const seen = lines.map((l) => [l.level, l.msg, l.error.name, l.error.message]).sort();
  assert.deepEqual(seen, [
    ["error", "uncaught exception", "TypeError", "thrown from a timer"],
    ["error", "unhandled promise rejection", "Error", "nobody handles this rejection"],
  ]);
  assert.ok(lines.every((l) => Array.isArray(l.error.stack)));
});

Deno.test("process guard: without it the same child dies", async () => {
  const { code, stdout } = await runChild(false);
  assert.notEqual(code, 0);
  assert.equal(stdout, "");
});
