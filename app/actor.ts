/**
 * Who an operation runs for: the one caller type of the application layer, whichever adapter
 * (`/v1`, MCP) or job (a schedule) starts it.
 *
 * @example
 * ```ts
 * const actor = keyActor(principal, "203.0.113.7");
 * await execute(services, createProject, actor, { body: { url: "https://example.com" } });
 * ```
 *
 * @module
 */
import type { Principal } from "../domain/identity/auth.ts";
import type { KeyMode } from "../domain/identity/types.ts";

/**
 * How an account actor authenticated: its API key itself, an OAuth access token of a connected
 * app (acting as the key that approved it, within what the operation admits for tokens), or
 * none (its own scheduled work).
 */
export type Credential =
  | { kind: "key" }
  | { kind: "token"; grantId: string; clientId: string }
  | { kind: "schedule" };

/** An account acting: through one of its API keys, or through its own scheduled work. */
export interface AccountActor {
  kind: "account";
  accountId: string;
  /** How it authenticated (a key, a connected app's token, its schedule). */
  credential: Credential;
  /** What the actor may see and how it pays: a sandbox key sees only the sandbox side. */
  mode: KeyMode;
  /** The calling API key; null for scheduled work (no key is forged for it). */
  keyId: string | null;
  /** The client address; null for scheduled work. */
  ip: string | null;
  /** The resolved key and account (cached per key); null for scheduled work. */
  principal: Principal | null;
}

/** A caller without a key: only public operations (signup, plans, docs) take one. */
export interface AnonymousActor {
  kind: "anonymous";
  ip: string;
}

export type Actor = AccountActor | AnonymousActor;

/** The actor of a request authenticated with an API key, or a token resolved to its key. */
export function keyActor(principal: Principal, ip: string): AccountActor {
  const { grant } = principal;
  return {
    kind: "account",
    accountId: principal.account.id,
    credential: grant
      ? { kind: "token", grantId: grant.id, clientId: grant.clientId }
      : { kind: "key" },
    mode: principal.key.mode,
    keyId: principal.key.id,
    ip,
    principal,
  };
}

/** The actor of an account's scheduled work: live mode (schedules need a live key to be set). */
export function scheduleActor(accountId: string): AccountActor {
  return {
    kind: "account",
    accountId,
    credential: { kind: "schedule" },
    mode: "live",
    keyId: null,
    ip: null,
    principal: null,
  };
}

/** The actor of a request without a key. */
export function anonymousActor(ip: string): AnonymousActor {
  return { kind: "anonymous", ip };
}
