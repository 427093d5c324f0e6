/**
 * The service's configuration as the domain sees it: the `Config` shape every capability reads.
 * Reading it from the environment (`loadConfig`, its defaults and checks) is the composition
 * root's business (config.ts beside main.ts), so this kernel imports no capability's code.
 *
 * @module
 */
import type { CrawlCaps } from "../audit_engine/types.ts";

/** The service's configuration, read once from the environment at start. */
export interface Config {
  port: number;
  host: string;
  kvPath: string;
  publicBaseUrl: string;
  adminToken: string | null;
  /**
   * `TRUST_PROXY`: how many trusted proxies append to `X-Forwarded-For` in front of the service
   * (0: none, the socket address is the client). The client is the entry that many places from
   * the right: the address the outermost trusted proxy saw, which the client cannot write.
   */
  trustProxyHops: number;
  /**
   * `CLIENT_IP_HEADER`: a header the trusted proxy overwrites with the client address (such as
   * `cf-connecting-ip` or `fly-client-ip`); read instead of `X-Forwarded-For` when set.
   */
  clientIpHeader: string | null;
  allowPrivateTargets: boolean;
  /** Raw 32-byte AES-GCM key for stored webhook secrets, or null when unset. */
  webhookEncryptionKey: Uint8Array | null;
  webhookRetryBaseMs: number;
  /**
   * Outbound mail (domain/mail/): `SMTP_URL` (`smtp://user:pass@host:port` or `smtps://…`) and
   * `MAIL_FROM` (`addr@host` or `Name <addr@host>`); mail is sent only when both are set.
   * `MAIL_RETRY_BASE_MS`: the first retry delay of a failed send, doubling per attempt.
   */
  mail: { smtpUrl: string | null; from: string | null; retryBaseMs: number };
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
  /**
   * Machine payments (the Machine Payments Protocol through npm `mppx`, Stripe method): with
   * `MPP_ENABLED`, a live key's 402 on a chargeable start also carries a payment challenge for the
   * unit's price (docs/billing.md "Machine payments"). Needs `STRIPE_SECRET_KEY`.
   */
  mpp: {
    enabled: boolean;
    /**
     * `MPP_SECRET_KEY`: signs the challenges (HMAC; at least 32 bytes, the same on every process).
     * Null: derived from `STRIPE_SECRET_KEY`, which every process already shares.
     */
    secretKey: string | null;
    /** `MPP_STRIPE_NETWORK_ID`: the Stripe profile (network id) shared payment tokens are for. */
    networkId: string;
  };
  openai: { apiKey: string | null; baseUrl: string | null; model: string };
  crawlMaxPages: number;
  crawlConcurrency: number;
  /** `CRAWL_STEP_PAGES`: frontier entries one crawl step takes before it commits (default 100). */
  crawlStepPages: number;
  /**
   * `CRAWL_STEP_PAGES` unset: on a slow KV (KV Connect across a network) a step takes up to
   * MAX_STEP_GROWTH times as many entries (audit_engine crawl/step_size.ts). Absent: false.
   */
  crawlStepAdaptive?: boolean;
  /** `CRAWL_STEP_SECONDS`: wall time after which a step starts no new fetch (default 20). */
  crawlStepSeconds: number;
  /**
   * `CRAWL_PARTITIONS`: workers that may fetch for one audit at once (default 1: one chain of
   * steps); above 1 each step claims its own leased range of the frontier (crawl/partition.ts).
   */
  crawlPartitions: number;
  /**
   * `CRAWL_MAX_RPS`: requests per second per host at most, for every audit (0.1 to 1000; an
   * audit's `max_rps` may only lower it). Unset (null): no rate cap, only `CRAWL_CONCURRENCY`
   * requests in flight, robots.txt Crawl-delay and Retry-After (domain/audit_engine/crawl/politeness.ts).
   */
  crawlMaxRps: number | null;
  /**
   * `CRAWL_INCREMENTAL` (default on): audits store each HTML page's facts and a project's next
   * audit reuses them for pages that did not change (domain/audit_engine/crawl/reuse.ts); off
   * (`0`): every audit is a full one and stores nothing. Absent: on.
   */
  crawlIncremental?: boolean;
  /**
   * The error-rate stop of every crawl (`CRAWL_ERROR_RATE_MAX`, `CRAWL_ERROR_WINDOW`,
   * `CRAWL_ERROR_PAUSE_SECONDS`, `CRAWL_ERROR_MAX_PAUSE_SECONDS`, `CRAWL_ERROR_PAUSES`;
   * domain/audit_engine/crawl/health.ts): the share of errors among the last `window` responses
   * that pauses the crawl, the first and the longest pause (ms), pauses before it ends.
   */
  crawlErrorStop: {
    maxRate: number;
    window: number;
    pauseMs: number;
    maxPauseMs: number;
    pauses: number;
  };
  /**
   * `kv`: Deno KV's native queue (a local file or `:memory:`); `table`: a polled KV job table, for
   * KV Connect URLs and hosts without queues. Defaults to `table` for http(s) KV paths.
   */
  jobQueue: "kv" | "table";
  /**
   * `SERVICE_ROLE`: `all` (HTTP and jobs in one process, the default), `web` (HTTP, MCP and
   * docs; enqueues, runs no job) or `worker` (jobs only, a health endpoint on `HEALTH_PORT`).
   */
  role: ServiceRole;
  /**
   * `JOB_RUNNER`, the `all` role on a KV file: `child` (default) runs jobs in a supervised
   * worker child process, `inline` on this process's own event loop.
   */
  jobRunner: "child" | "inline";
  /** `WORKER_CONCURRENCY`: jobs one process runs at once from the job table (default 2). */
  workerConcurrency: number;
  /** `HEALTH_PORT`: the worker role's health endpoint (default 8001). */
  healthPort: number;
  /**
   * `WORKER_NICE`: the scheduling priority a worker process lowers itself to (0–19, default 10),
   * so on a shared machine the API wins the CPU from crawls, parsing and the browser.
   */
  workerNice: number;
  /** `MAINTENANCE_INTERVAL_MS`: how often a process ticks (flushes, and leads if it can). */
  maintenanceIntervalMs: number;
  /** `LEADER_LEASE_MS`: how long a leader that stopped ticking keeps the shared work. */
  leaderLeaseMs: number;
  /** Requests per minute per API key (the interface's 600; raised only for benchmarks). */
  rateLimitPerMinute: number;
  /**
   * Requests per minute per account, all its keys together, so five keys or revoke-and-mint gain
   * nothing; default twice the per-key limit.
   */
  accountRateLimitPerMinute: number;
  /**
   * `OAUTH_REGISTRATIONS_PER_BLOCK_PER_HOUR`: OAuth dynamic client registrations (RFC 7591) one
   * address block (IPv4 /24, IPv6 /48, as the signup cap) may make per hour (default 20); unused
   * registrations expire after a day. `OAUTH_REGISTRATIONS_PER_IP_PER_HOUR`, its old name, is
   * still read when the new one is unset.
   */
  oauthRegistrationsPerBlockPerHour: number;
  /**
   * `SHARED_PAGE_RATE_PER_MINUTE`: requests per minute per client IP to the shared report and
   * preview pages (`/reports/{token}`, `/previews/{token}`), unknown tokens included (default 60).
   */
  sharedPageRatePerMinute: number;
  /** Abuse limits of the public signup ("Signup limits" in docs/contributors.md). */
  signup: {
    /** Signups per hour per client IP (the interface's 5). */
    perIpPerHour: number;
    /** Signups per hour from everywhere together. */
    globalPerHour: number;
    /** Sandbox accounts per day per address block (IPv4 /24, IPv6 /48). */
    perBlockPerDay: number;
    /** `allow`, or `refuse` emails at known disposable-address domains. */
    disposableEmails: "allow" | "refuse";
    /** Extra disposable domains the operator adds to the built-in list. */
    disposableDomains: string[];
  };
  /** The crawl budget of a sandbox audit (the catalogue's `crawlLimitsFor`). */
  sandboxCrawl: { maxPages: number; maxBytes: number; maxDurationMs: number };
  /** What a crawled site may make one audit hold (domain/audit_engine/crawl/caps.ts). */
  crawlCaps: CrawlCaps;
  /** How long a client may take to send a request body before 408 (slow-body connections). */
  bodyTimeoutMs: number;
  /**
   * MCP `wait` calls held open at once (`MCP_WAITS_PER_KEY`, default 5; `MCP_WAITS_PER_PROCESS`,
   * default 200): a call past either cap answers at once with the job's current status.
   */
  mcpWaits: { perKey: number; perProcess: number };
  /**
   * `MCP_TASK_POLL_MS`: the `pollIntervalMs` an MCP task handle suggests; null (the default)
   * suggests the job's own estimate, the `poll_after_seconds` of its 202 (app/jobs/poll_hint.ts).
   */
  mcpTaskPollMs: number | null;
  /**
   * Rendered audits (docs/render.md): `RENDERING=off` refuses them (503 rendering_unavailable);
   * on Deno Deploy (`DENO_DEPLOYMENT_ID` set) they are always off (no Chromium there). The caps
   * are the pages one rendered audit renders: all of them, and the lab (throttled) share;
   * `maxRounds` the render rounds (`RENDER_MAX_ROUNDS`, default 5: the URLs rendered pages link
   * to are crawled and rendered in the next round).
   */
  render: {
    enabled: boolean;
    maxPages: number;
    labPages: number;
    pagesInFlight: number;
    maxRounds: number;
  };
  /**
   * How long a cached API-key lookup may be trusted before KV is asked again: the fallback bound on
   * another process's revocation, which normally arrives through the revocation signal.
   */
  authCacheTtlMs: number;
  /**
   * `AUTH_REVOCATION_POLL_MS`: how often a process reads the revocation signal besides watching it
   * (0: never). Default 50 on a local KV file, whose `kv.watch` misses other processes' writes
   * (`watchMissesOtherProcesses`); 0 on `:memory:` (one process), Deno Deploy's KV and KV Connect,
   * where the watch sees every writer.
   */
  authRevocationPollMs: number;
  /**
   * `JOB_LEASE_MS`: when set, how long a worker holds an audit, an article or a webhook attempt
   * (and a queued job may wait) before the stale-job sweep hands it to another worker; null keeps
   * each job's built-in default (audits 15 min, articles 10 min, queued jobs 2 min, webhook
   * attempts 1 min). Short values make a dead process's work resume within seconds; keep it above
   * the longest job, or a slow live run is started a second time (harmless, but wasted work).
   */
  jobLeaseMs: number | null;
  /**
   * Upgrades a human finishes (domain/upgrades/): `requireVerifiedEmail`
   * (`UPGRADE_REQUIRE_VERIFIED_EMAIL`, default on when mail is configured) makes the human prove
   * the account's email with a one-time link before paying; `mailConfigured` says whether such a
   * link can be sent at all (`SMTP_URL` and `MAIL_FROM` both set).
   */
  upgrades: { requireVerifiedEmail: boolean; mailConfigured: boolean };
}

/** Which part of the service a process runs (`SERVICE_ROLE`). */
export type ServiceRole = "all" | "web" | "worker";
