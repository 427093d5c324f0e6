/**
 * The account's Stripe customer: created with the account's first checkout and kept on the
 * account (`stripeCustomerId`), so every later checkout pays as the same customer and the
 * Billing Portal (`POST /v1/billing-portal`) shows all of it. The Stripe call carries an
 * Idempotency-Key derived from the account, so two first checkouts racing get Stripe's one
 * customer back; the store keeps the first id written.
 *
 * @module
 */
import { atomically } from "../../kv/atomic.ts";
import { ApiError, atomic, type Deps, keys, list, read, readMany } from "../platform/mod.ts";
import type { StripeClient } from "./stripe_client.ts";

/** The account's Stripe customer id, creating (and keeping) it on first use. */
export async function ensureStripeCustomer(
  deps: Deps,
  stripe: StripeClient,
  accountId: string,
): Promise<string> {
  const account = (await read(deps.kv, keys.account(accountId))).value;
  if (!account) throw new ApiError("unauthorized", "Unknown account");
  if (account.stripeCustomerId) return account.stripeCustomerId;
  const customer = await stripe.customers.create({
    email: account.email,
    metadata: { service: "serpwright", account_id: accountId },
  }, { idempotencyKey: `serpwright-customer-${accountId}` });
  return await atomically(deps.kv, async () => {
    const entry = await read(deps.kv, keys.account(accountId));
    if (!entry.value) throw new ApiError("unauthorized", "Unknown account");
    if (entry.value.stripeCustomerId) {
      return { op: atomic(deps.kv).check(entry), result: entry.value.stripeCustomerId };
    }
    const op = atomic(deps.kv).check(entry).set(entry.key, {
      ...entry.value,
      stripeCustomerId: customer.id,
    });
    return { op, result: customer.id };
  });
}

/**
 * The account's Stripe customer without creating one: the account's own, else one a project
 * subscription recorded (accounts that paid before customers were kept on the account); null
 * when it never paid.
 */
export async function knownStripeCustomer(deps: Deps, accountId: string): Promise<string | null> {
  const account = (await read(deps.kv, keys.account(accountId))).value;
  if (account?.stripeCustomerId) return account.stripeCustomerId;
  const ids: string[] = [];
  for await (const e of list(deps.kv, { prefix: keys.projectsOfAccount(accountId) })) {
    ids.push(e.value.id);
  }
  for (let i = 0; i < ids.length; i += 10) {
    const subs = await readMany(deps.kv, ids.slice(i, i + 10).map((id) => keys.subscription(id)));
    const found = subs.find((s) => s.value?.stripeCustomerId);
    if (found) return found.value!.stripeCustomerId;
  }
  return null;
}
