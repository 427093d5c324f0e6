/**
 * Resolves an OAuth access token presented at `/mcp` to the principal of the API key that
 * approved it: the same `Principal` an API key resolves to, so the MCP tools and the application
 * layer see one actor type whichever credential came in, and a token can never do more than its
 * key (or outlive its revocation or expiry).
 *
 * The hot path matches API keys' (the benchmark's 1.2× budget): an in-process cache by token
 * digest, then the key resolver's own cache; no KV read. The cache follows the key resolver's
 * invalidations (`onInvalidate`), so a grant's end, which writes the revocation signal, drops the
 * account's tokens in every process within ~100 ms, and `AUTH_CACHE_TTL_MS` bounds the rest.
 * Expiry and audience are checked against the record on every use.
 *
 * @module
 */
import { type KeyResolver, type Principal, revocationShard } from "../auth.ts";
import { ApiError, type Deps, keys, read } from "../../platform/mod.ts";
import { mcpResourceUrl } from "./metadata.ts";
import { digest } from "./secrets.ts";
import type { AccessTokenRecord } from "./types.ts";

interface Entry {
  token: AccessTokenRecord;
  fetchedAt: number;
}

const MAX_ENTRIES = 10_000;

function refused(message: string): ApiError {
  return new ApiError("unauthorized", message);
}

export class TokenResolver {
  #cache = new Map<string, Entry>();
  #byAccount = new Map<string, Set<string>>();
  #generation = 0;
  readonly audience: string;

  constructor(private deps: Deps, private keyResolver: KeyResolver) {
    this.audience = mcpResourceUrl(deps.config.publicBaseUrl);
    keyResolver.onInvalidate((dropped) => {
      this.#generation++;
      if (dropped === "all") {
        this.#cache.clear();
        this.#byAccount.clear();
        return;
      }
      const accounts = "accountId" in dropped
        ? [dropped.accountId]
        : [...this.#byAccount.keys()].filter((a) => revocationShard(a) === dropped.shard);
      for (const accountId of accounts) {
        for (const h of this.#byAccount.get(accountId) ?? []) this.#cache.delete(h);
        this.#byAccount.delete(accountId);
      }
    });
  }

  /**
   * The approving key's principal for a raw access token, or 401 `unauthorized` saying why
   * (unknown, expired, revoked, another audience, the key revoked or expired). Synchronous from a
   * fresh cache entry.
   */
  resolve(raw: string): Principal | Promise<Principal> {
    const hash = digest(raw);
    const now = this.deps.clock.now();
    const entry = this.#cache.get(hash);
    if (entry && now - entry.fetchedAt <= this.deps.config.authCacheTtlMs) {
      return this.#principal(entry.token, now);
    }
    return this.#fetch(hash, now);
  }

  #principal(token: AccessTokenRecord, now: number): Principal | Promise<Principal> {
    if (token.expiresAt <= now) {
      throw refused("The access token expired; refresh it at the token endpoint");
    }
    // RFC 8707: a token for another resource (another server, or this one under an old URL).
    if (token.resource !== this.audience) {
      throw refused(`The access token was issued for another resource, not ${this.audience}`);
    }
    // The key's cached principal is shared by every caller of the key: the token's own view adds
    // the grant, so the operation layer can tell a connected app from the key holder.
    const grant = { id: token.grantId, clientId: token.clientId };
    try {
      const found = this.keyResolver.resolveHash(token.keyHash);
      return found instanceof Promise
        ? found.then((p) => ({ ...p, grant }), (e) => Promise.reject(keyProblem(e)))
        : { ...found, grant };
    } catch (e) {
      throw keyProblem(e);
    }
  }

  async #fetch(hash: string, now: number): Promise<Principal> {
    const generation = this.#generation;
    const { kv } = this.deps;
    const token = (await read(kv, keys.oauthAccessToken(hash), "strong")).value;
    if (!token) throw refused("Unknown access token");
    const grant = (await read(kv, keys.oauthGrant(token.accountId, token.grantId), "strong")).value;
    if (!grant || grant.revokedAt !== null) {
      throw refused("This app's access was revoked; sign in again");
    }
    if (generation === this.#generation) this.#store(hash, { token, fetchedAt: now });
    return await this.#principal(token, now);
  }

  #store(hash: string, entry: Entry): void {
    if (this.#cache.size >= MAX_ENTRIES && !this.#cache.has(hash)) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) {
        const old = this.#cache.get(oldest);
        this.#cache.delete(oldest);
        if (old) this.#byAccount.get(old.token.accountId)?.delete(oldest);
      }
    }
    this.#cache.set(hash, entry);
    let set = this.#byAccount.get(entry.token.accountId);
    if (!set) this.#byAccount.set(entry.token.accountId, set = new Set());
    set.add(hash);
  }
}

/** The approving key's refusal, reworded for a token holder. */
function keyProblem(e: unknown): unknown {
  if (!(e instanceof ApiError)) return e;
  if (e.code === "key_revoked") {
    return new ApiError("key_revoked", "The API key that approved this app was revoked");
  }
  if (e.code === "key_expired") {
    return new ApiError("key_expired", "The sandbox key that approved this app has expired");
  }
  return refused("The API key that approved this app no longer exists");
}
