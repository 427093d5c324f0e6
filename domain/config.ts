/** The service's configuration, read once from the environment at start. */
export interface Config {
  port: number;
  host: string;
  kvPath: string;
  publicBaseUrl: string;
  adminToken: string | null;
  trustProxy: boolean;
  allowPrivateTargets: boolean;
  /** Raw 32-byte AES-GCM key for stored webhook secrets, or null when unset. */
  webhookEncryptionKey: Uint8Array | null;
  webhookRetryBaseMs: number;
  stripe: {
    secretKey: string | null;
    webhookSecret: string | null;
    apiBase: string | null;
    prices: {
      basic: string | null;
      pro: string | null;
      pack_500: string | null;
      pack_2000: string | null;
      pack_10000: string | null;
    };
  };
  openai: { apiKey: string | null; baseUrl: string | null; model: string };
  crawlMaxPages: number;
  crawlConcurrency: number;
  /** `CRAWL_STEP_PAGES`: frontier entries one crawl step takes before it commits (default 100). */
  crawlStepPages: number;
  /** `CRAWL_STEP_SECONDS`: wall time after which a step starts no new fetch (default 20). */
  crawlStepSeconds: number;
  /**
   * `kv`: Deno KV's native queue (a local file or `:memory:`); `table`: a polled KV job table, for
   * KV Connect URLs and hosts without queues. Defaults to `table` for http(s) KV paths.
   */
  jobQueue: "kv" | "table";
  /** Requests per minute per API key (the interface's 600; raised only for benchmarks). */
  rateLimitPerMinute: number;
  /** How long a cached API-key lookup may be trusted before KV is asked again (other processes' revocations). */
  authCacheTtlMs: number;
  /**
   * `JOB_LEASE_MS`: when set, how long a worker holds an audit, an article or a webhook attempt
   * (and a queued job may wait) before the stale-job sweep hands it to another worker; null keeps
   * each job's built-in default (audits 15 min, articles 10 min, queued jobs 2 min, webhook
   * attempts 1 min). Short values make a dead process's work resume within seconds; keep it above
   * the longest job, or a slow live run is started a second time (harmless, but wasted work).
   */
  jobLeaseMs: number | null;
}

/** Thrown when a set variable is malformed; main.ts prints it and exits. */
export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`Invalid ${variable}: ${problem}`);
    this.name = "ConfigError";
  }
}

/**
 * Reads and validates the configuration. Every variable is optional; a set but malformed one throws
 * `ConfigError` naming it, so the server fails fast at start.
 *
 * @example
 * ```ts
 * const config = loadConfig(Deno.env.toObject());
 * ```
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const get = (name: string): string | null => {
    const v = env[name];
    return v === undefined || v.trim() === "" ? null : v.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const v = get(name);
    if (v === null) return fallback;
    if (!/^\d+$/.test(v)) throw new ConfigError(name, `expected an integer, got '${v}'`);
    const n = Number(v);
    if (n < min || n > max) throw new ConfigError(name, `expected ${min} to ${max}, got ${n}`);
    return n;
  };
  const flag = (name: string): boolean => {
    const v = get(name);
    if (v === null) return false;
    if (v === "1" || v === "true") return true;
    if (v === "0" || v === "false") return false;
    throw new ConfigError(name, `expected 1 or 0, got '${v}'`);
  };
  const url = (name: string, fallback: string | null): string | null => {
    const v = get(name);
    if (v === null) return fallback;
    let parsed: URL;
    try {
      parsed = new URL(v);
    } catch {
      throw new ConfigError(name, `expected an absolute http(s) URL, got '${v}'`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new ConfigError(name, `expected an http(s) URL, got '${v}'`);
    }
    return v.replace(/\/+$/, "");
  };
  const price = (name: string): string | null => {
    const v = get(name);
    if (v !== null && !/^[A-Za-z0-9_]+$/.test(v)) {
      throw new ConfigError(name, "expected a Stripe price id such as price_123");
    }
    return v;
  };

  let webhookEncryptionKey: Uint8Array | null = null;
  const rawKey = get("WEBHOOK_ENCRYPTION_KEY");
  if (rawKey !== null) {
    try {
      webhookEncryptionKey = Uint8Array.from(atob(rawKey), (ch) => ch.charCodeAt(0));
    } catch {
      throw new ConfigError("WEBHOOK_ENCRYPTION_KEY", "expected base64");
    }
    if (webhookEncryptionKey.length !== 32) {
      throw new ConfigError(
        "WEBHOOK_ENCRYPTION_KEY",
        `expected 32 bytes, got ${webhookEncryptionKey.length}`,
      );
    }
  }

  const kvPath = get("KV_PATH") ?? "./data/kv.sqlite";
  const adminToken = get("ADMIN_TOKEN");
  if (adminToken !== null && adminToken.length < 16) {
    throw new ConfigError("ADMIN_TOKEN", "expected at least 16 characters");
  }

  return {
    port: int("PORT", 8000, 0, 65535),
    host: get("HOST") ?? "0.0.0.0",
    kvPath,
    publicBaseUrl: url("PUBLIC_BASE_URL", "http://localhost:8000")!,
    adminToken,
    trustProxy: flag("TRUST_PROXY"),
    allowPrivateTargets: flag("ALLOW_PRIVATE_TARGETS"),
    webhookEncryptionKey,
    webhookRetryBaseMs: int("WEBHOOK_RETRY_BASE_MS", 30_000, 1, 6 * 3_600_000),
    stripe: {
      secretKey: get("STRIPE_SECRET_KEY"),
      webhookSecret: get("STRIPE_WEBHOOK_SECRET"),
      apiBase: url("STRIPE_API_BASE", null),
      prices: {
        basic: price("STRIPE_PRICE_BASIC"),
        pro: price("STRIPE_PRICE_PRO"),
        pack_500: price("STRIPE_PRICE_PACK_500"),
        pack_2000: price("STRIPE_PRICE_PACK_2000"),
        pack_10000: price("STRIPE_PRICE_PACK_10000"),
      },
    },
    openai: {
      apiKey: get("OPENAI_API_KEY"),
      baseUrl: url("OPENAI_BASE_URL", null),
      model: get("OPENAI_MODEL") ?? "gpt-4o-mini",
    },
    crawlMaxPages: int("CRAWL_MAX_PAGES", 200, 1, 100_000),
    crawlConcurrency: int("CRAWL_CONCURRENCY", 4, 1, 32),
    crawlStepPages: int("CRAWL_STEP_PAGES", 100, 1, 5_000),
    crawlStepSeconds: int("CRAWL_STEP_SECONDS", 20, 1, 600),
    jobQueue: jobQueueOf(get("JOB_QUEUE"), kvPath),
    rateLimitPerMinute: int("RATE_LIMIT_PER_MINUTE", 600, 1, 1_000_000_000),
    authCacheTtlMs: int("AUTH_CACHE_TTL_MS", 2_000, 0, 60_000),
    jobLeaseMs: get("JOB_LEASE_MS") === null ? null : int("JOB_LEASE_MS", 0, 100, 86_400_000),
  };
}

function jobQueueOf(value: string | null, kvPath: string): "kv" | "table" {
  if (value === null) return /^https?:\/\//.test(kvPath) ? "table" : "kv";
  if (value === "kv" || value === "table") return value;
  throw new ConfigError("JOB_QUEUE", `expected kv or table, got '${value}'`);
}
