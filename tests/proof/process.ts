/**
 * The real server as a child process on a KV file, for the crash and scale-out proofs: start it
 * (`deno run main.ts` with an env), wait until it answers, talk HTTP to it, kill it with SIGKILL
 * or stop it with SIGTERM, and start another on the same file. Children's output is kept (not
 * printed) and shown when a test fails through `logs()`.
 */
import { openTestKv } from "../helpers/kv.ts";
import { findPack } from "../../domain/billing/catalog.ts";
import type { CheckoutRecord } from "../../domain/billing/types.ts";
import { withBusyRetry } from "../../kv/busy_retry.ts";
import { keys } from "../../kv/keys.ts";
import { signPayload, stripeEvent } from "../billing/fake_stripe.ts";
import { WEBHOOK_SECRET } from "../billing/fake_stripe.ts";
import {
  ADMIN_TOKEN,
  jsonRequest,
  type ReqOptions,
  type TestResponse,
  WEBHOOK_KEY_B64,
} from "../helpers/app.ts";
import { pollUntil, truthy } from "../helpers/jobs.ts";
import { freePort } from "../helpers/ports.ts";

export { ADMIN_TOKEN };

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const REPO = new URL("../../", import.meta.url).pathname;

/** A fresh temporary KV file path, and a way to remove it (with SQLite's -wal/-shm files). */
export async function tempKvPath(): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "serpwright-proof-" });
  return {
    path: `${dir}/kv.sqlite`,
    remove: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
  };
}

export type { ReqOptions };

export interface ServerProcess {
  url: string;
  port: number;
  pid: number;
  /** The KV file it runs on. */
  kvPath: string;
  req(method: string, path: string, opts?: ReqOptions): Promise<TestResponse>;
  /** SIGKILL, as a crash or an OOM kill would: no shutdown hook runs. Idempotent. */
  kill(): Promise<void>;
  /** SIGTERM: the graceful stop of main.ts. Idempotent. */
  stop(): Promise<void>;
  /** Everything the child wrote so far. */
  logs(): string;
  /** Resolves with the exit status once the child has gone. */
  status: Promise<Deno.CommandStatus>;
}

/** The env every proof child gets; tests add or override. */
export function baseEnv(kvPath: string): Record<string, string> {
  return {
    HOST: "127.0.0.1",
    KV_PATH: kvPath,
    ADMIN_TOKEN,
    ALLOW_PRIVATE_TARGETS: "1",
    TRUST_PROXY: "1",
    WEBHOOK_ENCRYPTION_KEY: WEBHOOK_KEY_B64,
    WEBHOOK_RETRY_BASE_MS: "1000",
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    JOB_LEASE_MS: "1500",
    // The proofs of one all-role process kill it and expect its jobs gone with it: inline.
    JOB_RUNNER: "inline",
    NO_COLOR: "1",
  };
}

/**
 * Starts `main.ts` in a child on `kvPath` and resolves once `GET /v1/plans` answers 200 (or
 * rejects after `timeoutMs`, having killed the child). `permissions` are its permission flags
 * (every permission unless a test passes, say, those of `deno task start`).
 */
export async function startServer(
  kvPath: string,
  env: Record<string, string> = {},
  timeoutMs = 30_000,
  denoFlags: string[] = [],
  readyUrl?: string,
  permissions: string[] = ["-A"],
): Promise<ServerProcess> {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, "--unstable-kv", "--unstable-cron", ...denoFlags, MAIN],
    cwd: REPO,
    env: { ...baseEnv(kvPath), PORT: String(port), ...env },
    clearEnv: false,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) out += chunk;
  };
  const drained = Promise.all([collect(child.stdout), collect(child.stderr)]);
  const status = child.status.then(async (s) => {
    await drained;
    return s;
  });
  let gone = false;
  status.then(() => (gone = true));
  const url = readyUrl ? new URL(readyUrl).origin : `http://127.0.0.1:${port}`;

  const signal = async (sig: Deno.Signal) => {
    if (!gone) {
      try {
        child.kill(sig);
      } catch { /* already exited */ }
    }
    await status;
  };
  const server: ServerProcess = {
    url,
    port,
    pid: child.pid,
    kvPath,
    req: (method, path, opts) => request(url, method, path, opts),
    kill: () => signal("SIGKILL"),
    stop: () => signal("SIGTERM"),
    logs: () => out,
    status,
  };

  const deadline = Date.now() + timeoutMs;
  while (true) {
    if (gone) throw new Error(`server exited during start:\n${out}`);
    try {
      const res = await fetch(readyUrl ?? `${url}/v1/plans`);
      await res.body?.cancel();
      if (res.status === 200) return server;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      await server.kill();
      throw new Error(`server did not answer within ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts a `SERVICE_ROLE=worker` child on `kvPath` and resolves once its health endpoint answers
 * 200; `req` talks to that endpoint's port.
 */
export async function startWorker(
  kvPath: string,
  env: Record<string, string> = {},
  timeoutMs = 30_000,
  denoFlags: string[] = [],
): Promise<ServerProcess> {
  const healthPort = freePort();
  return await startServer(
    kvPath,
    { SERVICE_ROLE: "worker", HEALTH_PORT: String(healthPort), ...env },
    timeoutMs,
    denoFlags,
    `http://127.0.0.1:${healthPort}/health`,
  );
}

/** One JSON request to a child server (the test helper's, re-exported for the proof tests). */
export const request = jsonRequest;

let ipCounter = 1;
/** A distinct client IP per call (signups are limited per IP). */
export function nextIp(): string {
  const n = ipCounter++;
  return `203.0.${n & 255}.${((n >> 8) & 255) + 1}`;
}

/** A fresh account with its sandbox key and a live key minted by the operator. */
export async function liveAccount(
  server: ServerProcess,
): Promise<{ accountId: string; sandboxKey: string; key: string }> {
  const signup = await server.req("POST", "/v1/accounts", {
    body: { email: `proof-${crypto.randomUUID()}@example.com` },
    ip: nextIp(),
  });
  if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${signup.text}`);
  const accountId = signup.body.account_id as string;
  const live = await server.req("POST", `/admin/accounts/${accountId}/live-keys`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  if (live.status !== 201) throw new Error(`live key: ${live.status} ${live.text}`);
  return { accountId, sandboxKey: signup.body.api_key, key: live.body.api_key };
}

/** Creates a project and returns its id. */
export async function newProject(server: ServerProcess, key: string, url: string) {
  const res = await server.req("POST", "/v1/projects", { key, body: { url } });
  if (res.status !== 201) throw new Error(`project: ${res.status} ${res.text}`);
  return res.body.project_id as string;
}

/**
 * A signed, paid credit-pack `checkout.session.completed` for an account: what Stripe sends. The
 * children have no Stripe API, so the checkout `POST /v1/credits/purchases` would have stored is
 * written into their KV file first (the webhook grants only sessions the service created).
 */
export async function packPaidEvent(
  server: ServerProcess,
  accountId: string,
  packId: "pack_500" | "pack_2000" | "pack_10000" = "pack_500",
) {
  const sessionId = `cs_test_proof_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const record: CheckoutRecord = {
    sessionId,
    kind: "credit_pack",
    accountId,
    projectId: null,
    planId: null,
    packId,
    url: `https://checkout.stripe.test/c/pay/${sessionId}`,
    createdAt: Date.now(),
    completedAt: null,
  };
  const kv = withBusyRetry(await openTestKv(server.kvPath));
  try {
    await kv.set(keys.checkout(sessionId), record);
  } finally {
    kv.close();
  }
  return stripeEvent("checkout.session.completed", {
    id: sessionId,
    object: "checkout.session",
    mode: "payment",
    status: "complete",
    payment_status: "paid",
    currency: "usd",
    amount_subtotal: findPack(packId)!.usd * 100,
    amount_total: findPack(packId)!.usd * 100,
    payment_intent: `pi_proof_${sessionId.slice(-12)}`,
    metadata: {
      service: "serpwright",
      kind: "credit_pack",
      account_id: accountId,
      pack_id: packId,
    },
    customer: "cus_test_proof",
  });
}

/** Posts a Stripe event to `/webhooks/stripe`, signed now with the children's secret. */
export async function postStripe(server: ServerProcess, event: unknown): Promise<TestResponse> {
  const payload = JSON.stringify(event);
  const signature = await signPayload(payload, Date.now());
  return await server.req("POST", "/webhooks/stripe", {
    rawBody: payload,
    headers: { "content-type": "application/json", "stripe-signature": signature },
  });
}

/**
 * Maintenance every 300 ms and a 1.5 s leader lease (defaults 5 s and 30 s): a process takes over
 * a dead or stopped one's shared work (the stale-job sweeps) within a proof's patience.
 */
export const FAST_MAINTENANCE = {
  MAINTENANCE_INTERVAL_MS: "300",
  LEADER_LEASE_MS: "1500",
} as const;

/**
 * How the proofs poll a child: every 100 ms, and a request that fails (the child being killed or
 * started) counts as "not yet". For `waitForAudit` and the like.
 */
export const CHILD_POLL = { intervalMs: 100, retryErrors: true } as const;

/**
 * Calls `check` until it returns a truthy value, and returns that; throws after `timeoutMs`
 * (polling as `CHILD_POLL` says).
 */
export async function until<T>(
  check: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  return await pollUntil(check, truthy, { ...CHILD_POLL, timeoutMs, what });
}

/** Whether process `pid` is gone (a signal to it fails). */
export function exited(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return false;
  } catch {
    return true;
  }
}

/** Kills every given child (SIGKILL), ignoring ones already gone. For `finally` blocks. */
export async function killAll(...servers: (ServerProcess | null | undefined)[]): Promise<void> {
  await Promise.all(servers.map((s) => s?.kill()));
}
