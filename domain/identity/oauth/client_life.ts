/**
 * How long a client is kept: no client lives forever, and none outlives its grants by more than
 * a day or two.
 *
 * - A dynamic registration (RFC 7591) ends a day after it was made (`unusedClientMs`) unless an
 *   approval uses it; then it lives while it has a live grant and a day past the end of the last
 *   one (`clientAfterGrantsMs`).
 * - A metadata-document client is only cached (an hour at most, clients.ts); what lasts is the
 *   mark that an approval used it (`ClientUse`), with the same life.
 *
 * Both are one KV record whose `expiresAt` decides (read against the service clock; an expired
 * registration answers `invalid_client` and is deleted on sight) and whose KV `expireIn` follows
 * it, so the store cleans itself. The life moves with the grants: each grant is listed under its
 * client (`oauth_client_grants`, in the grant's own commits); a new grant pushes the end to the
 * grant's expiry plus two days, in the grant's commit (so a concurrent `settleClient` retries); a
 * refresh pushes it only when it would fall within a day of the grant's new expiry (one client
 * write a day, not one per refresh); an ended grant is taken off the list and the end recomputed
 * from the grants left (`settleClient`): a day after the latest of them, or a day from now.
 *
 * A client is verified once an approval used it (`usedAt`): until then its errors are shown on
 * the page and never redirected (authorization.ts).
 *
 * @module
 */
import { atomically } from "../../../kv/atomic.ts";
import { type Atomic, atomic, type Deps, keys, list, read } from "../../platform/mod.ts";
import { isMetadataDocumentId, registrationEnd } from "./clients.ts";
import { digest, expireInFor, LIFETIME } from "./secrets.ts";
import type { ClientMetadata, ClientUse, RegisteredClient } from "./types.ts";

/** The most grants of one client `settleClient` reads; past it the end is only ever moved later. */
const MAX_SETTLE_GRANTS = 1_000;

/** A client's life record as read: the registration, or the metadata document's use mark. */
export type ClientLife =
  | { kind: "dcr"; entry: Deno.KvEntryMaybe<RegisteredClient> }
  | { kind: "cimd"; clientId: string; entry: Deno.KvEntryMaybe<ClientUse> };

/** Reads the life record of a client (strongly: it is written in checked commits). */
export async function readClientLife(deps: Deps, clientId: string): Promise<ClientLife> {
  if (isMetadataDocumentId(clientId)) {
    const entry = await read(deps.kv, keys.oauthClientUse(digest(clientId)), "strong");
    return { kind: "cimd", clientId, entry };
  }
  return { kind: "dcr", entry: await read(deps.kv, keys.oauthClient(clientId), "strong") };
}

/** The end the record holds now (0 when there is none; a legacy used registration: 0). */
function endOf(life: ClientLife): number {
  const v = life.entry.value;
  if (!v) return 0;
  if (life.kind === "cimd") return (v as ClientUse).expiresAt;
  const end = registrationEnd(v as RegisteredClient);
  return Number.isFinite(end) ? end : 0;
}

/**
 * Adds the record's new end (and `usedAt`) to `op`, checked against what was read. No-op for a
 * registration that is gone: nothing brings a client back.
 */
function setEnd(op: Atomic, deps: Deps, life: ClientLife, end: number): Atomic {
  const now = deps.clock.now();
  const expireIn = expireInFor(end, now);
  if (life.kind === "dcr") {
    const v = life.entry.value;
    if (!v) return op;
    return op.check(life.entry).set(life.entry.key, {
      ...v,
      usedAt: v.usedAt ?? now,
      expiresAt: end,
    }, { expireIn });
  }
  const use: ClientUse = {
    clientId: life.clientId,
    usedAt: life.entry.value?.usedAt ?? now,
    expiresAt: end,
  };
  return op.check(life.entry).set(life.entry.key, use, { expireIn });
}

/**
 * Records that an approval used the client (it is verified from now on) and keeps it at least a
 * day, long enough for its code to be redeemed.
 */
export async function markClientUsed(deps: Deps, clientId: string): Promise<void> {
  await atomically(deps.kv, async () => {
    const life = await readClientLife(deps, clientId);
    const end = Math.max(endOf(life), deps.clock.now() + LIFETIME.clientAfterGrantsMs);
    return { op: setEnd(atomic(deps.kv), deps, life, end), result: null };
  });
}

/**
 * Adds to a grant's commit: the grant listed under its client, and the client's end pushed to
 * at least a day past the grant's expiry (to two days, so refreshes seldom write it). `always`
 * writes the client even when its end is far enough (a new grant: a concurrent `settleClient`
 * must see the conflict).
 */
export function holdClient(
  deps: Deps,
  op: Atomic,
  life: ClientLife,
  grant: { id: string; accountId: string; clientId: string; expiresAt: number },
  always: boolean,
): Atomic {
  const now = deps.clock.now();
  op.set(keys.oauthClientGrant(digest(grant.clientId), grant.id), {
    accountId: grant.accountId,
    expiresAt: grant.expiresAt,
  }, { expireIn: expireInFor(grant.expiresAt, now) });
  const needed = grant.expiresAt + LIFETIME.clientAfterGrantsMs;
  const current = endOf(life);
  if (!always && current >= needed) return op;
  return setEnd(op, deps, life, Math.max(current, needed + LIFETIME.clientAfterGrantsMs));
}

/**
 * After one of its grants ended (and was taken off its list): the client's end becomes a day
 * after the latest expiry of the grants it has left, or a day from now when it has none.
 */
export async function settleClient(deps: Deps, clientId: string): Promise<void> {
  await atomically(deps.kv, async () => {
    // The record first: a grant added after this read also writes it, so the commit conflicts.
    const life = await readClientLife(deps, clientId);
    if (!life.entry.value) return { op: atomic(deps.kv), result: null };
    const now = deps.clock.now();
    let latest = now;
    let seen = 0;
    for await (
      const e of list(deps.kv, { prefix: keys.oauthClientGrants(digest(clientId)) }, {
        limit: MAX_SETTLE_GRANTS,
      })
    ) {
      seen++;
      if (e.value.expiresAt > latest) latest = e.value.expiresAt;
    }
    let end = latest + LIFETIME.clientAfterGrantsMs;
    if (seen >= MAX_SETTLE_GRANTS) end = Math.max(end, endOf(life));
    return { op: setEnd(atomic(deps.kv), deps, life, end), result: null };
  });
}

/**
 * True when an approval used the client and its mark still lasts: a verified client, whose
 * authorization errors may be redirected to it.
 */
export async function clientVerified(deps: Deps, client: ClientMetadata): Promise<boolean> {
  if (client.kind === "dcr") return (client as RegisteredClient).usedAt !== null;
  const use = (await read(deps.kv, keys.oauthClientUse(digest(client.clientId)))).value;
  return use !== null && use.clientId === client.clientId && use.expiresAt > deps.clock.now();
}
