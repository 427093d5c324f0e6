/**
 * Configuration at the composition root: `loadConfig` reads and checks the environment into the
 * domain's `Config` (domain/platform/config.ts) with the defaults the capabilities own (the crawl
 * and robots.txt caps, the KV watch's reach), and says at start what is off (`configNotices`) and
 * how to reach a development server (`devHints`). main.ts and the tests import it; the domain
 * imports only the `Config` type.
 *
 * @module
 */
import {
  DEFAULT_CRAWL_CAPS,
  DEFAULT_ERROR_STOP,
  DEFAULT_ROBOTS_CAPS as ROBOTS,
} from "./domain/audit_engine/mod.ts";
import { watchMissesOtherProcesses } from "./domain/jobs/mod.ts";
import type { Config, ServiceRole } from "./domain/platform/mod.ts";

export type { Config, ServiceRole };

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
  /** A decimal in [min, max], or null when unset. */
  const decimal = (name: string, min: number, max: number): number | null => {
    const v = get(name);
    if (v === null) return null;
    if (!/^\d{1,7}(\.\d{1,3})?$/.test(v)) {
      throw new ConfigError(name, `expected a number such as 5 or 0.5, got '${v}'`);
    }
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

  // On Deno Deploy an unset KV_PATH means the deployment's own database ("": no path).
  const kvPath = get("KV_PATH") ?? (get("DENO_DEPLOYMENT_ID") !== null ? "" : "./data/kv.sqlite");
  const role = roleOf(get("SERVICE_ROLE"));
  const jobRunner = get("JOB_RUNNER") ?? "child";
  if (jobRunner !== "child" && jobRunner !== "inline") {
    throw new ConfigError("JOB_RUNNER", `expected child or inline, got '${jobRunner}'`);
  }
  const mppEnabled = flag("MPP_ENABLED");
  if (mppEnabled && get("STRIPE_SECRET_KEY") === null) {
    throw new ConfigError("MPP_ENABLED", "machine payments need STRIPE_SECRET_KEY");
  }
  const mppSecret = get("MPP_SECRET_KEY");
  if (mppSecret !== null && new TextEncoder().encode(mppSecret).length < 32) {
    throw new ConfigError("MPP_SECRET_KEY", "expected at least 32 bytes (openssl rand -base64 32)");
  }
  const mppNetwork = get("MPP_STRIPE_NETWORK_ID") ?? "internal";
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(mppNetwork)) {
    throw new ConfigError(
      "MPP_STRIPE_NETWORK_ID",
      `expected a Stripe profile id, got '${mppNetwork}'`,
    );
  }
  const rateLimitPerMinute = int("RATE_LIMIT_PER_MINUTE", 600, 1, 1_000_000_000);
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
    trustProxyHops: trustProxyOf(get("TRUST_PROXY")),
    clientIpHeader: headerNameOf(get("CLIENT_IP_HEADER")),
    allowPrivateTargets: flag("ALLOW_PRIVATE_TARGETS"),
    webhookEncryptionKey,
    webhookRetryBaseMs: int("WEBHOOK_RETRY_BASE_MS", 30_000, 1, 6 * 3_600_000),
    mail: {
      smtpUrl: smtpUrlOf(get("SMTP_URL")),
      from: mailFromOf(get("MAIL_FROM")),
      retryBaseMs: int("MAIL_RETRY_BASE_MS", 30_000, 1, 6 * 3_600_000),
    },
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
    mpp: { enabled: mppEnabled, secretKey: mppSecret, networkId: mppNetwork },
    openai: {
      apiKey: get("OPENAI_API_KEY"),
      baseUrl: url("OPENAI_BASE_URL", null),
      model: get("OPENAI_MODEL") ?? "gpt-4o-mini",
    },
    crawlMaxPages: int("CRAWL_MAX_PAGES", 200, 1, 100_000),
    crawlConcurrency: int("CRAWL_CONCURRENCY", 4, 1, 32),
    crawlStepPages: int("CRAWL_STEP_PAGES", 100, 1, 5_000),
    crawlStepAdaptive: get("CRAWL_STEP_PAGES") === null,
    crawlStepSeconds: int("CRAWL_STEP_SECONDS", 20, 1, 600),
    crawlPartitions: int("CRAWL_PARTITIONS", 1, 1, 16),
    crawlMaxRps: decimal("CRAWL_MAX_RPS", 0.1, 1_000),
    crawlIncremental: get("CRAWL_INCREMENTAL") === null || flag("CRAWL_INCREMENTAL"),
    crawlErrorStop: {
      maxRate: decimal("CRAWL_ERROR_RATE_MAX", 0.05, 1) ?? DEFAULT_ERROR_STOP.maxRate,
      window: int("CRAWL_ERROR_WINDOW", DEFAULT_ERROR_STOP.window, 2, 1_000),
      pauseMs: int("CRAWL_ERROR_PAUSE_SECONDS", DEFAULT_ERROR_STOP.pauseMs / 1000, 1, 3_600) *
        1000,
      maxPauseMs: int(
        "CRAWL_ERROR_MAX_PAUSE_SECONDS",
        DEFAULT_ERROR_STOP.maxPauseMs / 1000,
        1,
        3_600,
      ) * 1000,
      pauses: int("CRAWL_ERROR_PAUSES", DEFAULT_ERROR_STOP.pauses, 0, 20),
    },
    // Processes that split the work (roles, or the all role's worker child) share the job table.
    jobQueue: jobQueueOf(
      get("JOB_QUEUE"),
      kvPath,
      role !== "all" || (jobRunner === "child" && kvPath !== ":memory:"),
    ),
    role,
    jobRunner,
    workerConcurrency: int("WORKER_CONCURRENCY", 2, 1, 64),
    healthPort: int("HEALTH_PORT", 8001, 0, 65535),
    workerNice: int("WORKER_NICE", 10, 0, 19),
    maintenanceIntervalMs: int("MAINTENANCE_INTERVAL_MS", 5_000, 100, 600_000),
    leaderLeaseMs: int("LEADER_LEASE_MS", 30_000, 500, 3_600_000),
    rateLimitPerMinute,
    // Two keys' worth by default: room to rotate (old and new key both busy), no more.
    accountRateLimitPerMinute: int(
      "ACCOUNT_RATE_LIMIT_PER_MINUTE",
      2 * rateLimitPerMinute,
      1,
      2_000_000_000,
    ),
    oauthRegistrationsPerBlockPerHour: int(
      get("OAUTH_REGISTRATIONS_PER_BLOCK_PER_HOUR") === null &&
        get("OAUTH_REGISTRATIONS_PER_IP_PER_HOUR") !== null
        ? "OAUTH_REGISTRATIONS_PER_IP_PER_HOUR"
        : "OAUTH_REGISTRATIONS_PER_BLOCK_PER_HOUR",
      20,
      1,
      1_000_000,
    ),
    sharedPageRatePerMinute: int("SHARED_PAGE_RATE_PER_MINUTE", 60, 1, 1_000_000_000),
    signup: {
      perIpPerHour: int("SIGNUP_RATE_PER_IP_PER_HOUR", 5, 1, 1_000_000),
      globalPerHour: int("SIGNUP_RATE_GLOBAL_PER_HOUR", 500, 1, 10_000_000),
      perBlockPerDay: int("SIGNUP_SANDBOXES_PER_BLOCK_PER_DAY", 20, 1, 10_000_000),
      disposableEmails: disposableOf(get("SIGNUP_DISPOSABLE_EMAILS")),
      disposableDomains: domainsOf(get("SIGNUP_DISPOSABLE_DOMAINS")),
    },
    crawlCaps: {
      linksPerPage: int("CRAWL_MAX_LINKS_PER_PAGE", DEFAULT_CRAWL_CAPS.linksPerPage, 10, 100_000),
      frontierFactor: int("CRAWL_FRONTIER_FACTOR", DEFAULT_CRAWL_CAPS.frontierFactor, 1, 100),
      maxUrlLength: int("CRAWL_MAX_URL_LENGTH", DEFAULT_CRAWL_CAPS.maxUrlLength, 64, 1_500),
      redirectHops: int("CRAWL_MAX_REDIRECT_HOPS", DEFAULT_CRAWL_CAPS.redirectHops, 1, 50),
      sitemapFiles: int("CRAWL_MAX_SITEMAPS", DEFAULT_CRAWL_CAPS.sitemapFiles, 1, 1_000),
      sitemapBytes: int(
        "CRAWL_SITEMAP_MAX_BYTES",
        DEFAULT_CRAWL_CAPS.sitemapBytes,
        1024,
        10 * 1024 * 1024 * 1024,
      ),
      resources: int("CRAWL_MAX_RESOURCES", DEFAULT_CRAWL_CAPS.resources!, 0, 1_000_000),
      robots: {
        maxBytes: int("ROBOTS_MAX_BYTES", ROBOTS.maxBytes, 1024, 10 * 1024 * 1024),
        maxRules: int("ROBOTS_MAX_RULES", ROBOTS.maxRules, 1, 1_000_000),
        maxPatternLength: int("ROBOTS_MAX_PATTERN_LENGTH", ROBOTS.maxPatternLength, 1, 100_000),
        maxWildcards: int("ROBOTS_MAX_WILDCARDS", ROBOTS.maxWildcards, 0, 1_000),
        maxWildcardRules: int("ROBOTS_MAX_WILDCARD_RULES", ROBOTS.maxWildcardRules, 0, 1_000_000),
        maxPathLength: int("ROBOTS_MAX_PATH_LENGTH", ROBOTS.maxPathLength, 64, 100_000),
      },
    },
    sandboxCrawl: {
      maxPages: int("SANDBOX_CRAWL_MAX_PAGES", 25, 1, 10_000),
      maxBytes: int("SANDBOX_CRAWL_MAX_BYTES", 10 * 1024 * 1024, 1024, 10 * 1024 * 1024 * 1024),
      maxDurationMs: int("SANDBOX_CRAWL_MAX_SECONDS", 120, 1, 86_400) * 1000,
    },
    bodyTimeoutMs: int("REQUEST_BODY_TIMEOUT_MS", 10_000, 100, 600_000),
    mcpWaits: {
      perKey: int("MCP_WAITS_PER_KEY", 5, 0, 1_000),
      perProcess: int("MCP_WAITS_PER_PROCESS", 200, 0, 100_000),
    },
    mcpTaskPollMs: get("MCP_TASK_POLL_MS") === null
      ? null
      : int("MCP_TASK_POLL_MS", 0, 10, 600_000),
    render: {
      enabled: get("RENDERING") !== "off" && get("DENO_DEPLOYMENT_ID") === null,
      maxPages: int("RENDER_MAX_PAGES", 50, 1, 500),
      labPages: int("RENDER_LAB_PAGES", 10, 0, 50),
      pagesInFlight: int("RENDER_PAGES_IN_FLIGHT", 2, 1, 8),
      maxRounds: int("RENDER_MAX_ROUNDS", 5, 1, 20),
    },
    authCacheTtlMs: int("AUTH_CACHE_TTL_MS", 2_000, 0, 60_000),
    authRevocationPollMs: int(
      "AUTH_REVOCATION_POLL_MS",
      watchMissesOtherProcesses(kvPath) ? 50 : 0,
      0,
      60_000,
    ),
    jobLeaseMs: get("JOB_LEASE_MS") === null ? null : int("JOB_LEASE_MS", 0, 100, 86_400_000),
    upgrades: upgradesOf(get, flag),
  };
}

/**
 * `UPGRADE_REQUIRE_VERIFIED_EMAIL`: `1`/`true` or `0`/`false`; unset, on exactly when mail can be
 * sent (`SMTP_URL` and `MAIL_FROM`). On without mail would stop every upgrade at a link nobody
 * can send, so that combination stops the server at start.
 */
function upgradesOf(
  get: (name: string) => string | null,
  flag: (name: string) => boolean,
): Config["upgrades"] {
  const mailConfigured = get("SMTP_URL") !== null && get("MAIL_FROM") !== null;
  const set = get("UPGRADE_REQUIRE_VERIFIED_EMAIL") !== null;
  const requireVerifiedEmail = set ? flag("UPGRADE_REQUIRE_VERIFIED_EMAIL") : mailConfigured;
  if (requireVerifiedEmail && !mailConfigured) {
    throw new ConfigError(
      "UPGRADE_REQUIRE_VERIFIED_EMAIL",
      "on needs mail to send the verification link: set SMTP_URL and MAIL_FROM, or set it to 0",
    );
  }
  return { requireVerifiedEmail, mailConfigured };
}

function roleOf(value: string | null): ServiceRole {
  if (value === null || value === "all" || value === "web" || value === "worker") {
    return value ?? "all";
  }
  throw new ConfigError("SERVICE_ROLE", `expected all, web or worker, got '${value}'`);
}

/**
 * The queue: KV's native queue where it exists and one process does everything; the job table
 * wherever processes split into roles (any number of workers claim from it) or the store has no
 * native queue (KV Connect, Deno Deploy).
 */
function jobQueueOf(value: string | null, kvPath: string, split: boolean): "kv" | "table" {
  // Stores without native queues: a KV Connect URL, and Deno Deploy's own database ("").
  if (value === null) return split || kvPath === "" || /^https?:\/\//.test(kvPath) ? "table" : "kv";
  if (value === "table" || (value === "kv" && !split)) return value;
  if (value === "kv") {
    throw new ConfigError(
      "JOB_QUEUE",
      "kv needs one process doing everything (SERVICE_ROLE=all with JOB_RUNNER=inline)",
    );
  }
  throw new ConfigError("JOB_QUEUE", `expected kv or table, got '${value}'`);
}

/**
 * What this configuration leaves switched off, one line per unset variable, so an operator reads
 * at start what is missing instead of meeting it as an error later. Empty when nothing is off.
 *
 * @example
 * ```ts
 * for (const line of configNotices(loadConfig(Deno.env.toObject()))) console.warn(line);
 * ```
 */
export function configNotices(config: Config): string[] {
  const out: string[] = [];
  if (!config.webhookEncryptionKey) {
    out.push(
      "WEBHOOK_ENCRYPTION_KEY is unset: POST /v1/webhooks answers 503 webhooks_not_configured, " +
        "and audits or schedules with auth 503 site_auth_not_configured",
    );
  }
  const s = config.stripe;
  if (!s.secretKey || !s.webhookSecret) {
    const missing = [
      !s.secretKey && "STRIPE_SECRET_KEY",
      !s.webhookSecret && "STRIPE_WEBHOOK_SECRET",
    ]
      .filter(Boolean).join(" and ");
    out.push(`${missing} unset: purchases answer 503 billing_not_configured`);
  } else {
    const prices = Object.entries(s.prices).filter(([, v]) => v === null).map(([k]) =>
      `STRIPE_PRICE_${k.replace(/^pack_/, "PACK_").toUpperCase()}`
    );
    if (prices.length > 0) {
      out.push(`${prices.join(", ")} unset: those purchases answer 503 billing_not_configured`);
    }
  }
  if (!config.adminToken) out.push("ADMIN_TOKEN is unset: every /admin/* path answers 404");
  if (!config.mail.smtpUrl || !config.mail.from) {
    const missing = [!config.mail.smtpUrl && "SMTP_URL", !config.mail.from && "MAIL_FROM"]
      .filter(Boolean).join(" and ");
    out.push(
      `${missing} unset: no mail is sent; POST /v1/account/verify-email answers 503 ` +
        "mail_not_configured",
    );
  }
  if (!config.openai.apiKey) {
    out.push("OPENAI_API_KEY is unset: articles are written by the built-in offline writer");
  }
  return out;
}

/**
 * The throwaway operator token of `.env.dev`. A server started with it is a development server:
 * it prints how to reach the operator endpoints (`devHints`), which no deployment should accept.
 */
export const DEV_ADMIN_TOKEN = "dev-admin-token-not-secret";

/**
 * What a development server prints at start (`deno task dev`, whose `.env.dev` sets the throwaway
 * `ADMIN_TOKEN`): how to grant credits and mint a live key with the operator endpoints, so the
 * README's walk-through runs without Stripe. Empty for any other token, so a real one is never
 * printed.
 *
 * @example
 * ```ts
 * declare const config: Config;
 * for (const line of devHints(config)) console.log(line);
 * ```
 */
export function devHints(config: Config): string[] {
  if (config.adminToken !== DEV_ADMIN_TOKEN) return [];
  const base = config.publicBaseUrl;
  const auth = `-H 'Authorization: Bearer ${DEV_ADMIN_TOKEN}'`;
  return [
    "Development server (the throwaway ADMIN_TOKEN of .env.dev). Without Stripe, an account gets " +
    "credits and a live key from the operator endpoints:",
    `  curl -s -X POST ${base}/admin/accounts/acct_.../credits ${auth} \\`,
    `    -H 'Content-Type: application/json' -d '{"credits":500,"reason":"development"}'`,
    `  curl -s -X POST ${base}/admin/accounts/acct_.../live-keys ${auth}`,
  ];
}

/**
 * `SMTP_URL`: `smtp://` (STARTTLS when the server offers it) or `smtps://` (TLS from the start),
 * with a host; credentials and nodemailer's query options as the URL carries them. The value holds
 * a password, so no message repeats it.
 */
function smtpUrlOf(value: string | null): string | null {
  if (value === null) return null;
  const problem = "expected smtp://user:password@host:port or smtps://… (value not shown)";
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError("SMTP_URL", problem);
  }
  if (
    (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") || parsed.hostname === "" ||
    (parsed.pathname !== "" && parsed.pathname !== "/") || parsed.hash !== ""
  ) {
    throw new ConfigError("SMTP_URL", problem);
  }
  return value;
}

/** `MAIL_FROM`: `addr@host` or `Display Name <addr@host>`, one line (no header injection). */
function mailFromOf(value: string | null): string | null {
  if (value === null) return null;
  const address = '[^\\s<>@"]+@[^\\s<>@"]+\\.[^\\s<>@"]+';
  const ok = new RegExp(`^(?:${address}|[^<>\\x00-\\x1f\\x7f"]{1,100} <${address}>)$`);
  if (value.length > 320 || !ok.test(value)) {
    throw new ConfigError(
      "MAIL_FROM",
      `expected an address such as serpwright@example.com or 'Serpwright <serpwright@example.com>', got '${value}'`,
    );
  }
  return value;
}

/** `TRUST_PROXY`: unset/`0`/`false` none; `1`/`true` one proxy; `2`… that many proxies in a row. */
function trustProxyOf(value: string | null): number {
  if (value === null || value === "0" || value === "false") return 0;
  if (value === "true") return 1;
  if (/^\d{1,2}$/.test(value) && Number(value) <= 10) return Number(value);
  throw new ConfigError("TRUST_PROXY", `expected 0 to 10 (trusted proxy hops), got '${value}'`);
}

function headerNameOf(value: string | null): string | null {
  if (value === null) return null;
  if (!/^[A-Za-z0-9-]{1,64}$/.test(value)) {
    throw new ConfigError("CLIENT_IP_HEADER", `expected a header name, got '${value}'`);
  }
  return value.toLowerCase();
}

function disposableOf(value: string | null): "allow" | "refuse" {
  if (value === null || value === "allow") return "allow";
  if (value === "refuse") return "refuse";
  throw new ConfigError("SIGNUP_DISPOSABLE_EMAILS", `expected allow or refuse, got '${value}'`);
}

function domainsOf(value: string | null): string[] {
  if (value === null) return [];
  const out = value.split(",").map((d) => d.trim().toLowerCase()).filter((d) => d !== "");
  for (const d of out) {
    if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(d)) {
      throw new ConfigError("SIGNUP_DISPOSABLE_DOMAINS", `expected domain names, got '${d}'`);
    }
  }
  return out;
}
