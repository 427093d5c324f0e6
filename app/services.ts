/**
 * The long-lived objects of one process that the application layer and its adapters share.
 *
 * @module
 */
import type { Deps, ServiceRole } from "../domain/platform/mod.ts";
import type { KeyResolver, KeyUsageTracker, TokenResolver } from "../domain/identity/mod.ts";
import type { RateLimiter } from "../kv/rate_limiter.ts";
import type { WaitSlots } from "./wait_slots.ts";

/** Long-lived objects the routes share, built once per app. */
export interface Services {
  deps: Deps;
  /** This process: its role, and whether it leads the shared periodic work (last tick). */
  process: {
    role: ServiceRole;
    leader: boolean;
    /** The all role's worker child: its pid (null between restarts) and restarts so far. */
    worker?: { pid: () => number | null; restarts: () => number };
  };
  resolver: KeyResolver;
  /** OAuth access tokens at `/mcp`, resolved to their approving key's principal. */
  tokens: TokenResolver;
  keyUsage: KeyUsageTracker;
  limits: {
    /** 600 per minute per API key. */
    key: RateLimiter;
    /** Unauthenticated `/v1` traffic, per client IP. */
    ip: RateLimiter;
    /** All keys of an account together (`ACCOUNT_RATE_LIMIT_PER_MINUTE`). */
    account: RateLimiter;
    /** 5 signups per hour per client IP (`SIGNUP_RATE_PER_IP_PER_HOUR`). */
    signup: RateLimiter;
    /** Signups per hour from everywhere (`SIGNUP_RATE_GLOBAL_PER_HOUR`). */
    signupGlobal: RateLimiter;
    /**
     * OAuth dynamic client registrations per address block (IPv4 /24, IPv6 /48;
     * `OAUTH_REGISTRATIONS_PER_BLOCK_PER_HOUR`).
     */
    registration: RateLimiter;
    /** Client ID Metadata Document fetches per host (`CLIENT_DOC_FETCHES_PER_HOST`). */
    clientDocHost: RateLimiter;
    /** Failed operator-token attempts per client IP. */
    adminFailures: RateLimiter;
    /** Shared report and preview pages per client IP (`SHARED_PAGE_RATE_PER_MINUTE`). */
    sharedPages: RateLimiter;
    /** Wrong upgrade codes typed per client IP, and per address block (domain/upgrades/). */
    upgradeCodes: RateLimiter;
    upgradeCodeBlocks: RateLimiter;
  };
  /** The MCP `wait` calls this process holds open (`MCP_WAITS_PER_KEY`, `MCP_WAITS_PER_PROCESS`). */
  mcpWaits: WaitSlots;
}
