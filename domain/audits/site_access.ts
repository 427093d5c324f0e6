/**
 * Staging credentials at rest. An audit (or a schedule) that carries `auth` keeps it only as
 * AES-GCM ciphertext, under a key derived from the operator's `WEBHOOK_ENCRYPTION_KEY` (HKDF,
 * its own label, so the webhook secrets' key is never used as is for another purpose), sealed with
 * the webhook secrets' helper (webhooks/secret_box.ts). The ciphertext is bound to the account and
 * project (authenticated data): copied anywhere else it does not open; a schedule's copy is copied
 * as is into each audit it starts.
 *
 * Where it lives: `audit_auth/<auditId>` from the audit's creation (same commit) until its
 * finishing commit, completed or failed, which deletes it (`AUDIT_JOB.onFinish`; the prune sweep
 * deletes it again, in case); `schedule_auth/<projectId>` from a schedule PUT with `auth` until a
 * PUT without it, or the schedule's removal. The crawl opens it for each step (never stored in the
 * crawl state, never logged); the records keep only the mask (site_auth.ts `maskSiteAuth`).
 *
 * @module
 */
import type { SealedSiteAuth } from "./types.ts";
import { ApiError, type Deps, keys, read } from "../platform/mod.ts";
import {
  type MaskedSiteAuth,
  maskSiteAuth,
  type SiteAuth,
  siteAuthProblem,
} from "../audit_engine/mod.ts";
import { JobFailure } from "../platform/mod.ts";
import { openSecret, sealSecret } from "../webhooks/mod.ts";

export type { SealedSiteAuth };

/** Whose credentials they are: the ciphertext opens for this account's project only. */
export interface AuthOwner {
  accountId: string;
  projectId: string;
}

/** The crawl cannot open an audit's credentials (the operator key changed, or they are gone). */
function authUnavailable(message: string): JobFailure {
  return new JobFailure("auth_unavailable", message);
}

const encoder = new TextEncoder();
const derived = new WeakMap<Uint8Array, Promise<Uint8Array>>();

/** The sealing key: HKDF-SHA256 of the operator key with this purpose's own label. */
function authKey(master: Uint8Array): Promise<Uint8Array> {
  let k = derived.get(master);
  if (!k) {
    k = (async () => {
      const ikm = await crypto.subtle.importKey("raw", master as BufferSource, "HKDF", false, [
        "deriveBits",
      ]);
      const bits = await crypto.subtle.deriveBits(
        {
          name: "HKDF",
          hash: "SHA-256",
          salt: new Uint8Array(0),
          info: encoder.encode("serpwright site auth v1"),
        },
        ikm,
        256,
      );
      return new Uint8Array(bits);
    })();
    derived.set(master, k);
  }
  return k;
}

const bindingOf = (o: AuthOwner) => `site-auth\u0000${o.accountId}\u0000${o.projectId}`;

/** The operator key, or 503 `site_auth_not_configured` (nothing is charged or stored). */
function requireKey(deps: Pick<Deps, "config">): Uint8Array {
  const key = deps.config.webhookEncryptionKey;
  if (!key) {
    throw new ApiError(
      "site_auth_not_configured",
      "This server cannot store staging credentials: it has no WEBHOOK_ENCRYPTION_KEY to " +
        "encrypt them with. Start the audit without auth",
    );
  }
  return key;
}

/**
 * Checks and seals credentials for `owner`'s project: 400 naming the field when they break a
 * rule (site_auth.ts), 503 `site_auth_not_configured` without an operator key.
 */
export async function sealAuditAuth(
  deps: Pick<Deps, "config">,
  owner: AuthOwner,
  auth: SiteAuth,
): Promise<SealedSiteAuth> {
  const problem = siteAuthProblem(auth);
  if (problem) {
    throw new ApiError(
      "invalid_request",
      `${["auth", ...problem.path].join(".")}: ${problem.message}`,
    );
  }
  const key = await authKey(requireKey(deps));
  const box = await sealSecret(key, JSON.stringify(auth), bindingOf(owner));
  return { v: 1, mask: maskSiteAuth(auth), box };
}

/** Opens sealed credentials; throws a `JobFailure` coded `auth_unavailable` when they do not open. */
export async function openAuditAuth(
  deps: Pick<Deps, "config">,
  owner: AuthOwner,
  sealed: SealedSiteAuth,
): Promise<SiteAuth> {
  const master = deps.config.webhookEncryptionKey;
  if (!master) throw authUnavailable("WEBHOOK_ENCRYPTION_KEY is unset");
  try {
    return JSON.parse(await openSecret(await authKey(master), sealed.box, bindingOf(owner)));
  } catch {
    throw authUnavailable("the staging credentials do not open with this key");
  }
}

/**
 * The credentials of an audit for its crawl step, or null when it has none. An audit whose record
 * says it has credentials (`auth`) that cannot be read fails (a `JobFailure` coded `auth_unavailable`): a crawl
 * without them would audit the login wall.
 */
export async function auditAuthFor(
  deps: Pick<Deps, "kv" | "config">,
  audit: { id: string; accountId: string; projectId: string; auth?: MaskedSiteAuth },
): Promise<SiteAuth | null> {
  if (!audit.auth) return null;
  const sealed = (await read(deps.kv, keys.auditAuth(audit.id))).value;
  if (!sealed) throw authUnavailable("the staging credentials are gone");
  return await openAuditAuth(deps, audit, sealed);
}
