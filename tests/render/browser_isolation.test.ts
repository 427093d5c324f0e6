/**
 * The render browser holds no secret and has no GPU stack: launched by the real pool with the
 * service's secrets set in this process's environment, no Chromium process carries a secret's
 * name or value in its /proc environ or command line, the browser's environment is exactly the
 * minimal one, no process carries a SwiftShader/in-process-GPU flag or maps a GL/Vulkan/SwiftShader
 * library, pages get no WebGL, and the sandbox is on exactly when the plan says it can be.
 */
import assert from "node:assert/strict";
import {
  browserEnvironment,
  chromiumLaunchOptions,
  forbiddenFlags,
  isSandboxFailure,
  lastLaunchSandbox,
  sandboxPlan,
} from "../../domain/render/chromium.ts";
import { BrowserPool } from "../../domain/render/pool.ts";
import { renderPage } from "../../domain/render/renderer.ts";
import { pollUntil } from "../helpers/jobs.ts";
import { FIXTURE_NETWORK, startFixtureSite } from "./fixture_site.ts";

const OPTS = { sanitizeResources: false, sanitizeOps: false };

/** Every secret of the operator contract, with a recognisable fake value. */
const CANARIES: Record<string, string> = {
  ADMIN_TOKEN: "admin_token_canary_5f1c",
  STRIPE_SECRET_KEY: "sk_test_secret_canary",
  STRIPE_WEBHOOK_SECRET: "whsec_canary_9a7e",
  WEBHOOK_ENCRYPTION_KEY: "webhook_key_canary_c0de",
  OPENAI_API_KEY: "sk-openai-canary-77b2",
  DENO_KV_ACCESS_TOKEN: "ddp_kv_canary_31d4",
};

/** Set by Deno's `child_process` (the numbers of the extra pipes playwright-core opens: "3,4"). */
const DENO_SPAWN_VARS = new Set(["DENO_EXTRA_STDIO_FDS"]);

function readProc(pid: number, file: string): string | null {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/${file}`);
  } catch {
    return null; // gone, or a sandboxed process that is not dumpable to a non-root reader
  }
}

/** Still running: /proc/<pid> exists and is not a zombie (whose environ reads fail with ESRCH). */
function alive(pid: number): boolean {
  const stat = readProc(pid, "stat");
  return stat !== null && !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

function withCanaries<T>(fn: () => Promise<T>): Promise<T> {
  const saved = new Map(Object.keys(CANARIES).map((k) => [k, Deno.env.get(k)]));
  for (const [k, v] of Object.entries(CANARIES)) Deno.env.set(k, v);
  return fn().finally(() => {
    for (const [k, v] of saved) v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
  });
}

Deno.test({
  name: "render browser: launch options drop the package's unsafe, GPU and SwiftShader flags",
  ...OPTS,
  fn: async () => {
    const o = await chromiumLaunchOptions({ home: "/tmp/x", sandbox: true });
    assert.deepEqual(forbiddenFlags(o.args), []);
    for (const gone of ["--no-sandbox", "--disable-web-security", "--in-process-gpu"]) {
      assert.ok(!o.args.includes(gone), gone);
    }
    for (
      const added of ["--disable-gpu", "--use-gl=disabled", "--disable-webgl", "--disable-3d-apis"]
    ) {
      assert.ok(o.args.includes(added), added);
    }
    assert.deepEqual(o.ignoreDefaultArgs, ["--enable-unsafe-swiftshader"]); // playwright-core's own
    assert.equal(o.chromiumSandbox, true);
    assert.deepEqual(o.env, browserEnvironment("/tmp/x"));
    // playwright-core rewrites Chromium's "No usable sandbox!" into this; any launch error quotes
    // the command line (--disable-setuid-sandbox), which must not count as a sandbox failure.
    assert.ok(
      isSandboxFailure(new Error("launch: closed\nBrowser logs:\nChromium sandboxing failed!")),
    );
    assert.ok(
      !isSandboxFailure(
        new Error("Timeout 30000ms\n<launching> /tmp/chromium --disable-setuid-sandbox"),
      ),
    );
    if (Deno.uid() === 0) assert.equal(sandboxPlan().sandbox, false);
  },
});

/**
 * Reads every process of the pool's browser in /proc and asserts the isolation; returns the
 * browser's private home directory.
 */
function assertIsolated(pool: BrowserPool): string {
  const main = pool.browserMainPid();
  assert.ok(main !== null, "the browser's process is found in /proc");
  const pids = pool.browserPids();
  assert.ok(pids.length >= 3, `multi-process browser: ${pids.length} processes`);

  // The browser's own environment, which every child process inherits, is exactly ours.
  const mainEnv = Object.fromEntries(
    readProc(main, "environ")!.split("\0").filter(Boolean).map((kv) => {
      const i = kv.indexOf("=");
      return [kv.slice(0, i), kv.slice(i + 1)];
    }),
  );
  const home = mainEnv.HOME;
  assert.match(home, /serpwright-chromium-/);
  const kept = Object.fromEntries(
    Object.entries(mainEnv).filter(([k]) => !DENO_SPAWN_VARS.has(k)),
  );
  assert.deepEqual(kept, browserEnvironment(home));

  // Every process: no secret's name or value in /proc environ or cmdline. (Chromium's
  // children reuse that memory for their process title, so their environ is mostly title
  // and NULs; read anyway.) No GPU-in-process or SwiftShader flag, no GL library mapped.
  const uid = Deno.uid();
  let read = 0;
  for (const pid of pids) {
    const environ = readProc(pid, "environ");
    const cmdline = readProc(pid, "cmdline");
    if (environ === null || cmdline === null) {
      if (alive(pid)) assert.notEqual(uid, 0, `root reads /proc/${pid}`);
      continue; // exited since the listing, or not dumpable to a non-root reader
    }
    read++;
    for (const [name, value] of Object.entries(CANARIES)) {
      assert.ok(!environ.includes(value), `${name}'s value in /proc/${pid}/environ`);
      assert.ok(!environ.includes(`${name}=`), `${name} in /proc/${pid}/environ`);
      assert.ok(!cmdline.includes(value), `${name}'s value in /proc/${pid}/cmdline`);
    }
    // Child processes rewrite argv into one space-separated title.
    const args = cmdline.split(/[\0 ]/).filter(Boolean);
    assert.deepEqual(forbiddenFlags(args), [], `/proc/${pid}/cmdline`);
    const libs = (readProc(pid, "maps") ?? "").split("\n")
      .filter((l) => /libGLESv2|libEGL|swiftshader|libvulkan/i.test(l));
    assert.deepEqual(libs, [], `GL libraries mapped in ${pid}`);
  }
  assert.ok(read >= 1, "at least the browser's process was read");

  // Sandbox: as root Chromium refuses it; elsewhere on when the kernel allows it.
  const plan = lastLaunchSandbox();
  assert.ok(plan, "the pool's launch recorded its sandbox plan");
  const mainArgs = readProc(main, "cmdline")!.split("\0");
  assert.equal(mainArgs.includes("--no-sandbox"), !plan.sandbox, plan.reason);
  if (uid === 0) assert.equal(plan.sandbox, false);
  if (plan.sandbox) {
    const renderers = pids.filter((p) => readProc(p, "cmdline")?.includes("--type=renderer"));
    assert.ok(renderers.length > 0, "a renderer process");
    for (const p of renderers) {
      const seccomp = readProc(p, "status")?.match(/Seccomp:\s+(\d)/)?.[1];
      assert.equal(seccomp, "2", `renderer ${p} runs under a seccomp-bpf filter`);
    }
  }
  return home;
}

Deno.test({
  name: "render browser: no secret in any Chromium process, minimal env, no WebGL or SwiftShader",
  ...OPTS,
  fn: () =>
    withCanaries(async () => {
      const site = startFixtureSite();
      const pool = new BrowserPool();
      let home = "";
      try {
        // A real render through the pool, then a page asked for WebGL.
        const r = await renderPage(`${site.origin}/clean`, {
          pool,
          network: FIXTURE_NETWORK,
          lab: false,
        });
        assert.equal(r.rendered.title, "A clean page");
        // The processes are read while this page is open, so its renderer is among them.
        const gl = await pool.run(async (page) => {
          await page.setContent("<canvas></canvas>");
          home = assertIsolated(pool);
          return await page.evaluate(`(() => {
            const c = () => document.createElement("canvas");
            return {
              webgl: c().getContext("webgl") !== null,
              webgl2: c().getContext("webgl2") !== null,
              experimental: c().getContext("experimental-webgl") !== null,
              canvas2d: c().getContext("2d") !== null,
              webgpu: typeof navigator.gpu !== "undefined",
            };
          })()`);
        }, { timeoutMs: 20_000 });
        assert.deepEqual(gl, {
          webgl: false,
          webgl2: false,
          experimental: false,
          canvas2d: true,
          webgpu: false,
        });
      } finally {
        await pool.close();
        await site.close();
      }
      // The private home goes with the browser.
      await pollUntil(() => Promise.resolve(exists(home)), (there) => !there, {
        intervalMs: 50,
        timeoutMs: 2_500,
        what: "the browser's private home to go",
      });
      assert.ok(!exists(home), "the browser's private home was removed");
    }),
});
