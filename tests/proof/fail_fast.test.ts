/**
 * A process that cannot do its job exits non-zero with the reason on stderr, so that its own
 * supervisor (systemd, a container runtime) restarts it or an operator sees why: a port another
 * process holds, a KV path it cannot open, a worker child that cannot start. Real processes (`deno run main.ts`), real sockets.
 */
import assert from "node:assert/strict";
import { baseEnv, tempKvPath } from "./process.ts";
import { superviseWorkerChild } from "../../jobs/worker_child.ts";

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

Deno.test("a worker child that cannot start: the supervisor gives up after 5 quick deaths, with the reason", async () => {
  const kv = await tempKvPath();
  const deaths: string[] = [];
  let reason = "";
  const gaveUp = Promise.withResolvers<void>();
  const child = superviseWorkerChild({
    // The child refuses this configuration at start (the parent never reads it).
    env: { ...baseEnv(kv.path), CRAWL_STEP_PAGES: "not a number" },
    kvPath: kv.path,
    onLog: () => {},
    onDeath: (id) => Promise.resolve(deaths.push(id)),
    // The backoff's doubling is the same from any start; 1 s would make this test wait 15 s.
    restartMinMs: 50,
    onGiveUp: (r) => {
      reason = r;
      gaveUp.resolve();
    },
  });
  try {
    await gaveUp.promise;
    assert.match(reason, /died 5 times in a row/);
    assert.match(reason, /exit code 1/);
    assert.equal(deaths.length, 5, "each death's jobs were handed back");
    assert.equal(new Set(deaths).size, 5, "each child had its own worker id");
    assert.equal(child.restarts(), 4, "restarted between deaths, not after giving up");
    assert.equal(child.pid(), null, "no child runs");
  } finally {
    await child.stop();
    await kv.remove();
  }
});
