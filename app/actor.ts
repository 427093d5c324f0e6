/**
 * Who an operation runs for: the one caller type of the application layer, whichever adapter
 * (`/v1`, MCP) or job (a schedule) starts it. The actors, and how each authenticated:
 *
 * - `account`: an API key (sandbox or live), a connected app's OAuth access token acting as the
 *   key that approved it, or the account's own scheduled work (`Credential`);
 * - `anonymous`: no credential (signup, plans, docs);
 * - `operator`: the service's operator, with `ADMIN_TOKEN` at `/admin` (app/operator.ts: minting
 *   a live key, granting credits, publishing an article, health); never a `/v1` operation or an
 *   MCP tool;
 * - `share_link`: whoever holds a share link's token, on the public page it opens
 *   (app/reports/shared_page.ts): it reads the one audit report or article preview the link
 *   names, as the account that made it, and nothing else.
 *
 * @example
 * ```ts
 * import { execute } from "./operation.ts";
 * import { createProjectOp as createProject } from "./operations/projects.ts";
 * import type { Services } from "./services.ts";
 * declare const services: Services, principal: Parameters<typeof keyActor>[0];
 * const actor = keyActor(principal, "203.0.113.7");
 * await execute(services, createProject, actor, {
 *   params: {},
 *   query: {},
 *   body: { url: "https://example.com" },
 * });
 * ```
 *
 * @module
 */
import type { Principal } from "../domain/identity/mod.ts";
import type { KeyMode } from "../domain/identity/types.ts";
import type { ShareKind } from "../domain/shares/mod.ts";

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

/** The public `/v1` operations' actors (the registry serves these two). */
export type Actor = AccountActor | AnonymousActor;

/**
 * The service's operator, authenticated with `ADMIN_TOKEN` (checked, and failures throttled per
 * address, before the use case runs). Its use cases are app/operator.ts's, outside the `/v1`
 * registry.
 */
export interface OperatorActor {
  kind: "operator";
  ip: string;
}

/**
 * The holder of a share link: the token is its only credential. It reads the one target the link
 * names (an audit's report, an article's preview) as the account that made the link, on the side
 * (mode) of the key that made it.
 */
export interface ShareLinkActor {
  kind: "share_link";
  /** What the link opens. */
  share: ShareKind;
  /** The audit or article id. */
  targetId: string;
  /** The account that made the link, and the mode of the key that made it. */
  accountId: string;
  mode: KeyMode;
  ip: string;
}

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

/** The actor of an `/admin` request whose operator token was accepted. */
export function operatorActor(ip: string): OperatorActor {
  return { kind: "operator", ip };
}
