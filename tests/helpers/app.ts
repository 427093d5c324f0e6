/**
 * Starts the real service on a fresh in-memory KV and a loopback port, with a hand-moved clock,
 * and speaks HTTP to it. Every test gets its own instance.
 */
import { openTestKv } from "./kv.ts";
import { manualClock } from "../../domain/platform/clock.ts";
import { loadConfig } from "../../config.ts";
import { type RunningService, startService } from "../../main.ts";
import { keys } from "../../kv/keys.ts";

export const ADMIN_TOKEN = "test-admin-token-0123456789";
export const WEBHOOK_KEY_B64 = btoa(String.fromCharCode(...new Uint8Array(32).fill(3)));

export interface TestApp {
  url: string;
  kv: Deno.Kv;
  clock: ReturnType<typeof manualClock>;
  service: RunningService;
  /** JSON request; `key` sets the bearer, `ip` sets X-Forwarded-For (TRUST_PROXY is on). */
  req(method: string, path: string, opts?: ReqOptions): Promise<TestResponse>;
  /** Signs up a fresh account from a fresh IP and returns its sandbox key. */
  signup(email?: string): Promise<{ key: string; accountId: string }>;
  /** Mints a live key through the operator endpoint. */
  liveKey(accountId: string): Promise<string>;
  close(): Promise<void>;
}

export interface ReqOptions {
  key?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  ip?: string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
  text: string;
}

/** One JSON request to a running server: `key` sets the bearer, `ip` sets X-Forwarded-For. */
export async function jsonRequest(
  base: string,
  method: string,
  path: string,
  opts: ReqOptions = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.ip) headers["x-forwarded-for"] = opts.ip;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  // deno-lint-ignore no-explicit-any
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

let ipCounter = 1;
/**
 * A distinct client IP per call, in a distinct /24 for 256 calls in a row, so the per-IP signup
 * limit and the per-block sandbox cap of one test do not leak into another.
 */
export function freshIp(): string {
  const n = ipCounter++;
  return `198.51.${n & 255}.${((n >> 8) & 255) + 1}`;
}

export async function startTestApp(
  options: { env?: Record<string, string>; kv?: Deno.Kv; start?: number } = {},
): Promise<TestApp> {
  const kv = options.kv ?? await openTestKv();
  const clock = manualClock(options.start ?? Date.parse("2026-11-23T12:00:00Z"));
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    KV_PATH: ":memory:",
    TRUST_PROXY: "1",
    ADMIN_TOKEN,
    ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_ENCRYPTION_KEY: WEBHOOK_KEY_B64,
    WEBHOOK_RETRY_BASE_MS: "50",
    ...options.env,
  });
  const service = await startService({ config, kv, clock });

  const req = (method: string, path: string, opts: ReqOptions = {}) =>
    jsonRequest(service.url, method, path, opts);

  let emailCounter = 0;
  return {
    url: service.url,
    kv,
    clock,
    service,
    req,
    async signup(email?: string) {
      const res = await req("POST", "/v1/accounts", {
        body: { email: email ?? `agent${++emailCounter}-${crypto.randomUUID()}@example.com` },
        ip: freshIp(),
      });
      if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
      return { key: res.body.api_key, accountId: res.body.account_id };
    },
    async liveKey(accountId: string) {
      const res = await req("POST", `/admin/accounts/${accountId}/live-keys`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      if (res.status !== 201) throw new Error(`live key failed: ${res.status} ${res.text}`);
      return res.body.api_key;
    },
    async close() {
      await service.close();
      kv.close();
      await service.finished;
    },
  };
}

/** Runs `fn` with a fresh app and always closes it. */
export async function withApp(
  fn: (app: TestApp) => Promise<void>,
  options?: Parameters<typeof startTestApp>[0],
): Promise<void> {
  const app = await startTestApp(options);
  try {
    await fn(app);
  } finally {
    await app.close();
  }
}

/** Asserts the `/v1` error shape and returns the code. */
export function errorCode(res: TestResponse): string {
  const e = res.body?.error;
  if (
    !e || typeof e.code !== "string" || typeof e.message !== "string" ||
    typeof e.doc_url !== "string"
  ) {
    throw new Error(`not the error shape: ${res.status} ${res.text}`);
  }
  if (!e.doc_url.endsWith(`#${e.code}`)) throw new Error(`doc_url does not point at ${e.code}`);
  return e.code;
}

/** Gives a project a paid subscription directly in KV, as the payment webhook would. */
export async function subscribeProject(
  app: TestApp,
  accountId: string,
  projectId: string,
  plan: "basic" | "pro" = "basic",
): Promise<void> {
  const now = app.clock.now();
  await app.kv.set(keys.subscription(projectId), {
    projectId,
    accountId,
    plan,
    paidUntil: now + 30 * 86_400_000,
    stripeSubscriptionId: `sub_${projectId}`,
    stripeCustomerId: `cus_${accountId}`,
    activatedAt: now,
    updatedAt: now,
  });
}
