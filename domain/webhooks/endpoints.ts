/**
 * Webhook endpoints: register (capped at 20 per account), list, remove with their queued
 * deliveries.
 *
 * @module
 */
import { atomically } from "../../kv/atomic.ts";
import { ApiError, atomic, type Deps, keys, list, newId, read, readMany } from "../platform/mod.ts";
import { canSee } from "../identity/mod.ts";
import type { KeyMode } from "../identity/types.ts";
import { newSigningSecret, openSecret, requireEncryptionKey, sealSecret } from "./secret_box.ts";
import { checkWebhookUrl } from "./target.ts";
import { MAX_ENDPOINTS, type WebhookRecord } from "./types.ts";

/** The authenticated data binding a sealed secret to its endpoint. */
export function secretBinding(w: { accountId: string; id: string }): string {
  return `${w.accountId}/${w.id}`;
}

/**
 * Registers an endpoint. The URL is vetted by the address guard first; the account's endpoint
 * counter is checked and bumped in the same commit as the record, so parallel requests cannot
 * pass the cap. Returns the raw secret, which exists nowhere else after this call.
 */
export async function createWebhook(
  deps: Deps,
  caller: { accountId: string; mode: KeyMode },
  input: { url: string; events?: string[] },
): Promise<{ record: WebhookRecord; secret: string }> {
  const { accountId } = caller;
  const url = await checkWebhookUrl(deps, input.url);
  const encryptionKey = requireEncryptionKey(deps.config.webhookEncryptionKey);
  const events = [...new Set(input.events ?? [])];
  const secret = newSigningSecret();
  const now = deps.clock.now();
  const id = newId("wh", now);
  const sealed = await sealSecret(encryptionKey, secret, secretBinding({ accountId, id }));
  const record: WebhookRecord = {
    id,
    accountId,
    url,
    events,
    active: true,
    createdAt: now,
    secret: sealed,
    failureCount: 0,
    lastFailureAt: null,
    deactivatedAt: null,
    mode: caller.mode,
  };
  await atomically(deps.kv, async () => {
    const count = await read(deps.kv, keys.webhookCount(accountId));
    const n = count.value ?? 0;
    if (n >= MAX_ENDPOINTS) {
      throw new ApiError(
        "limit_reached",
        `An account may have at most ${MAX_ENDPOINTS} webhook endpoints; delete one first`,
      );
    }
    const op = atomic(deps.kv)
      .check(count)
      .check({ key: keys.webhook(accountId, id), versionstamp: null })
      .set(count.key, n + 1)
      .set(keys.webhook(accountId, id), record);
    return { op, result: undefined };
  });
  return { record, secret };
}

export interface ListedWebhook {
  record: WebhookRecord;
  /** The opened secret, for masking only; null when it cannot be opened. */
  secret: string | null;
  lastSuccessAt: number | null;
}

/** Whether a caller of `mode` may see an endpoint (`canSee`: a sandbox key, the sandbox side). */
function visible(mode: KeyMode, hook: WebhookRecord): boolean {
  return canSee(mode, hook.mode === "sandbox");
}

/** The account's endpoints a caller of `mode` may see, oldest first, secrets opened for masking. */
export async function listWebhooks(
  deps: Deps,
  caller: { accountId: string; mode: KeyMode },
): Promise<ListedWebhook[]> {
  const records: WebhookRecord[] = [];
  for await (const e of list(deps.kv, { prefix: keys.webhooksOfAccount(caller.accountId) })) {
    if (visible(caller.mode, e.value)) records.push(e.value);
  }
  records.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  const successes = new Map<string, number>();
  for (let i = 0; i < records.length; i += 10) {
    const batch = records.slice(i, i + 10);
    const got = await readMany(deps.kv, batch.map((r) => keys.webhookLastSuccess(r.id)));
    batch.forEach((r, j) => {
      if (got[j].value) successes.set(r.id, Number(got[j].value.value));
    });
  }
  const key = deps.config.webhookEncryptionKey;
  return await Promise.all(records.map(async (record) => {
    // The mask shows the last four characters so a human can tell endpoints apart; without the
    // key (or with a rotated one) the mask shows nothing rather than failing the list.
    let secret: string | null = null;
    if (key) {
      secret = await openSecret(key, record.secret, secretBinding(record)).catch(() => null);
    }
    return { record, secret, lastSuccessAt: successes.get(record.id) ?? null };
  }));
}

/**
 * Removes an endpoint, then its queued deliveries. The endpoint goes first, in one commit with the
 * counter: from then on any delivery of it that is still somewhere (a message in flight, a record
 * this cleanup has not reached after a crash) finds no endpoint and drops itself.
 */
export async function deleteWebhook(
  deps: Deps,
  caller: { accountId: string; mode: KeyMode },
  webhookId: string,
): Promise<void> {
  const { kv } = deps;
  const { accountId } = caller;
  await atomically(kv, async () => {
    const [hook, count] = await readMany(kv, [
      keys.webhook(accountId, webhookId),
      keys.webhookCount(accountId),
    ]);
    if (!hook.value || !visible(caller.mode, hook.value)) {
      throw new ApiError("not_found", `No webhook endpoint '${webhookId}' on this account`);
    }
    const op = atomic(kv)
      .check(hook)
      .check(count)
      .delete(hook.key)
      .delete(keys.webhookLastSuccess(webhookId))
      .set(count.key, Math.max(0, (count.value ?? 1) - 1));
    return { op, result: undefined };
  });
  await dropQueuedDeliveries(deps, webhookId);
}

/** Deletes every pending delivery of an endpoint with its index entries, in small batches. */
export async function dropQueuedDeliveries(deps: Deps, webhookId: string): Promise<void> {
  const { kv } = deps;
  const ids: string[] = [];
  for await (const e of list(kv, { prefix: keys.deliveriesOfWebhookPrefix(webhookId) })) {
    ids.push(String(e.key[e.key.length - 1]));
  }
  for (let i = 0; i < ids.length; i += 10) {
    const batch = ids.slice(i, i + 10);
    const records = await readMany(kv, batch.map((id) => keys.delivery(id)));
    const op = kv.atomic();
    batch.forEach((id, j) => {
      const r = records[j].value;
      op.delete(keys.delivery(id)).delete(keys.deliveriesOfWebhook(webhookId, id));
      if (r?.sweepAt != null) op.delete(keys.deliveryDue(r.sweepAt, id));
    });
    // No checks: deleting is the end state whatever a concurrent attempt wrote meanwhile, and an
    // attempt that commits after this finds its record gone (its own commit checks it).
    await op.commit();
  }
}
