/**
 * A process that cannot do its job exits non-zero with the reason on stderr, so that its own
 * supervisor (systemd, a container runtime) restarts it or an operator sees why: a port another
 * process holds, a KV path it cannot open. Real processes (`deno run main.ts`), real sockets.
 */
import assert from "node:assert/strict";
import { baseEnv, tempKvPath } from "./process.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const REPO = new URL("../../", import.meta.url).pathname;

/** Runs main.ts with `env` until it exits (killed after 60 s: then the test fails). */
async function runMain(env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--unstable-cron", MAIN],
    cwd: REPO,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const out = await child.output();
  clearTimeout(timer);
  return { code: out.code, signal: out.signal, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("a port another process holds: exit code 1 and the reason on stderr", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const kv = await tempKvPath();
  try {
    const port = (taken.addr as Deno.NetAddr).port;
    const res = await runMain({ ...baseEnv(kv.path), PORT: String(port) });
    assert.equal(res.signal, null, "it exited on its own, not killed by the test");
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:port ${port}`));
    assert.match(res.stderr, /in use/i);
  } finally {
    taken.close();
    await kv.remove();
  }
});

Deno.test("a worker whose health port is taken: exit code 1 and the reason", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const kv = await tempKvPath();
  try {
    const port = (taken.addr as Deno.NetAddr).port;
    const res = await runMain({
      ...baseEnv(kv.path),
      SERVICE_ROLE: "worker",
      HEALTH_PORT: String(port),
    });
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, new RegExp(`health port ${port}`));
  } finally {
    taken.close();
    await kv.remove();
  }
});

Deno.test("a KV path that cannot be opened: exit code 1 and the reason", async () => {
  const dir = await Deno.makeTempDir({ prefix: "serpwright-failfast-" });
  try {
    // A regular file where the KV's folder should be: neither mkdir nor SQLite can use it.
    await Deno.writeTextFile(`${dir}/file`, "not a folder");
    const path = `${dir}/file/kv.sqlite`;
    const res = await runMain({ ...baseEnv(path), PORT: "0" });
    assert.equal(res.signal, null, "it exited on its own");
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, /cannot start/);
    assert.ok(res.stderr.includes(path), res.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
