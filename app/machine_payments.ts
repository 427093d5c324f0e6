/**
 * Agents that pay for a job themselves: the Machine Payments Protocol (the HTTP `Payment`
 * authentication scheme) through npm `mppx`, its core server (`Mppx.create`, HTTP transport with
 * `requiresAuth`, so the credential travels in `Payment-Authorization` beside our
 * `Authorization: Bearer`) and its Stripe method (shared payment tokens, settled by the method as
 * a confirmed PaymentIntent through our Stripe SDK client). The protocol is the library's: the
 * challenge, its HMAC binding, the credential's parsing and the receipt are all `mppx`'s; this
 * module only decides when a 402 may be paid and what a settled payment does.
 *
 * When (`MPP_ENABLED`): an operation that declares `machinePayable`, run by a live actor, that
 * fails with 402 `insufficient_credits`. The challenge asks exactly `required_credits` USD (1
 * credit = 1 USD, the unit's catalogue price), bound to the operation, its path and the account
 * (the challenge's scope). The retry presents the credential: the operation runs first as usual
 * (credits that arrived meanwhile pay, and the credential is left unused); if it is still 402,
 * the library verifies the credential against that same price and settles it at Stripe, the
 * payment's credits are granted once per PaymentIntent (domain/billing/machine_payments.ts), the
 * receipt is handed to the adapter and the operation runs again, now debiting those credits. A
 * refused credential (a different price or route, expired, declined, or already settled: Stripe
 * replays the method's idempotent create and the library refuses it) answers the 402 again with
 * a fresh challenge and what was refused.
 *
 * `mppx` is loaded only when machine payments are on (its server modules take ~0.3 s to load).
 *
 * @module
 */
import { ApiError, type Config } from "../domain/platform/mod.ts";
import { grantMachinePayment } from "../domain/billing/mod.ts";
// Past billing/mod.ts on purpose: it loads stripe, kept off a worker's load (layers.test.ts).
import { createStripeClient, type StripeClient } from "../domain/billing/stripe_client.ts";
import type { Actor } from "./actor.ts";
import type { Services } from "./services.ts";

/** The request header a credential travels in (the challenge names it, `header=`). */
export const CREDENTIAL_HEADER = "Payment-Authorization";
/** The response header of a settled payment's receipt. */
export const RECEIPT_HEADER = "Payment-Receipt";
/** MCP `_meta` keys of the protocol (mppx `Mcp`): where challenges, credentials, receipts go. */
export const MCP_META = {
  paymentRequired: "org.paymentauth/payment-required",
  credential: "org.paymentauth/credential",
  receipt: "org.paymentauth/receipt",
} as const;

/** What a chargeable start (or a credit pack) costs, for a challenge. */
export interface PaymentOffer {
  credits: number;
  /** The USD asked, when it is not `credits` (a pack: 2000 USD buys 2200 credits). */
  usd?: number;
  /** What is sold besides the operation (a pack id): named in the description and bound in the scope. */
  item?: string;
  accountId: string;
  /** The operation and concrete path (the challenge is bound to them and the account). */
  operation: string;
  path: string;
}

/** A challenge as the adapters send it. */
export interface IssuedChallenge {
  /** The `WWW-Authenticate` value. */
  header: string;
  /** The same challenge as an object (MCP carries it in `_meta` and the error's fields). */
  challenge: Record<string, unknown>;
}

/** A settled payment. */
export interface SettledPayment {
  /** The `Payment-Receipt` value. */
  header: string;
  receipt: Record<string, unknown>;
  /** The challenge it answered (unknown on an idempotent replay). */
  challengeId?: string;
}

/** How an adapter takes part: the credential it received, and where the receipt goes. */
export interface PaymentExchange {
  /** The credential as sent (`Payment <base64url>`), or null. */
  credential: string | null;
  receipt(payment: SettledPayment): void;
}

/**
 * A 402 that carries a machine payment challenge: the operation's own error (code, message,
 * fields) with the challenge in `WWW-Authenticate` (`/v1`) and as `challenge` (MCP).
 */
export class MachinePaymentRequired extends ApiError {
  constructor(cause: ApiError, readonly issued: IssuedChallenge, refused?: string) {
    super(
      cause.code,
      refused ? `${cause.message}. The payment credential was refused: ${refused}` : cause.message,
      { ...cause.extra, ...(refused ? { payment_refused: refused } : {}) },
      { ...cause.headers, "WWW-Authenticate": issued.header, "Cache-Control": "no-store" },
    );
  }
}

// deno-lint-ignore no-explicit-any
type MppxCharge = (options: Record<string, unknown>) => (input: Request) => Promise<any>;

interface Gateway {
  charge: MppxCharge;
  /** The library's protocol modules (`Challenge`, `Credential`, `Receipt`). */
  lib: typeof import("mppx");
  base: string;
}

const gateways = new WeakMap<Services, Promise<Gateway | null>>();

/** This app's payment gateway, or null when machine payments are off. */
function gatewayOf(services: Services): Promise<Gateway | null> {
  let g = gateways.get(services);
  if (!g) gateways.set(services, g = buildGateway(services.deps.config));
  return g;
}

async function buildGateway(config: Config): Promise<Gateway | null> {
  if (!config.mpp.enabled) return null;
  const stripe = createStripeClient(config);
  if (!stripe) return null;
  const [{ Mppx }, { charge }, lib] = await Promise.all([
    import("mppx/server/core"),
    import("mppx/stripe/server/spt"),
    import("mppx"),
  ]);
  const base = config.publicBaseUrl;
  const mppx = Mppx.create({
    methods: [
      charge({
        client: stripe as unknown as Parameters<typeof charge>[0]["client"] & StripeClient,
        networkId: config.mpp.networkId,
        currency: "usd",
        decimals: 2,
        paymentMethodTypes: ["card"],
      }),
    ],
    secretKey: config.mpp.secretKey ?? await derivedSecret(config.stripe.secretKey!),
    realm: new URL(base).host,
    // Our `Authorization` carries the API key: the credential goes in `Payment-Authorization`.
    requiresAuth: true,
  });
  return { charge: mppx.charge as unknown as MppxCharge, lib, base };
}

/** A challenge key every process sharing `STRIPE_SECRET_KEY` derives alike. */
async function derivedSecret(stripeKey: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(stripeKey),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign(
    "HMAC",
    key,
    new TextEncoder().encode("serpwright/machine-payment-challenges/v1"),
  );
  return btoa(String.fromCharCode(...new Uint8Array(mac)));
}

/**
 * The offer a failed start may be paid with, or null: a machine-payable operation, a live
 * account actor, and 402 `insufficient_credits` naming the unit's price. Sandbox keys never pay
 * per job (docs/billing.md "Machine payments").
 */
export function offerFor(
  op: { id: string; machinePayable?: boolean },
  actor: Actor,
  path: string,
  err: unknown,
): PaymentOffer | null {
  if (!op.machinePayable || actor.kind !== "account" || actor.mode !== "live") return null;
  if (!(err instanceof ApiError) || err.code !== "insufficient_credits") return null;
  const credits = err.extra?.required_credits;
  if (typeof credits !== "number" || !Number.isSafeInteger(credits) || credits <= 0) return null;
  return { credits, accountId: actor.accountId, operation: op.id, path };
}

/**
 * Runs `run`; when it fails with a 402 that `offer` says may be paid and machine payments are
 * on, answers the challenge, or settles the exchange's credential and runs again (module doc).
 */
export async function runPayable<T>(
  services: Services,
  offerOf: (err: unknown) => PaymentOffer | null,
  exchange: PaymentExchange | undefined,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const offer = offerOf(err);
    if (!offer) throw err;
    const gateway = await gatewayOf(services);
    if (!gateway) throw err;
    const cause = err as ApiError;
    const answer = await handle(gateway, offer, exchange?.credential ?? null);
    if ("challenge" in answer) {
      throw new MachinePaymentRequired(cause, answer.challenge, answer.refused);
    }
    const { receipt } = answer.paid;
    const granted = await grantMachinePayment(services.deps, {
      accountId: offer.accountId,
      paymentIntentId: String(receipt.reference),
      challengeId: answer.challengeId,
      credits: offer.credits,
      amount: offer.credits * 100,
      currency: "usd",
    });
    if (!granted.applied) {
      // The library settled it, yet this PaymentIntent was granted before: never a second job.
      const fresh = await handle(gateway, offer, null);
      if ("challenge" in fresh) {
        throw new MachinePaymentRequired(cause, fresh.challenge, "this payment was already used");
      }
      throw cause;
    }
    exchange?.receipt(answer.paid);
    try {
      return await run();
    } catch (again) {
      // Paid, yet the start failed after all (a race): the credits stay on the balance, and the
      // error still hands over the receipt.
      if (!(again instanceof ApiError)) throw again;
      throw new ApiError(again.code, again.message, again.extra, {
        ...again.headers,
        [RECEIPT_HEADER]: answer.paid.header,
      });
    }
  }
}

/** What one pass of the library's handler answered: a challenge (and why a credential was refused), or a settled payment. */
export type Handled =
  | { challenge: IssuedChallenge; refused?: string }
  | { paid: SettledPayment; challengeId: string };

/**
 * The extension point for operations that sell something other than a job's unit (a credit pack
 * on POST /v1/upgrades): the library's answer to `offer` with `credential` (null: a challenge),
 * or null when machine payments are off. What a settled payment grants is the caller's to
 * commit, once per `paid.receipt.reference` (the PaymentIntent), as `grantMachinePayment` does.
 */
export async function requestPayment(
  services: Services,
  offer: PaymentOffer,
  credential: string | null,
): Promise<Handled | null> {
  const gateway = await gatewayOf(services);
  return gateway ? await handle(gateway, offer, credential) : null;
}

/** One pass of the library's handler for the offer, with the credential if there is one. */
async function handle(
  gateway: Gateway,
  offer: PaymentOffer,
  credential: string | null,
): Promise<Handled> {
  const headers = new Headers();
  if (credential) headers.set(CREDENTIAL_HEADER, credential);
  const request = new Request(new URL(offer.path, gateway.base), { method: "POST", headers });
  const result = await gateway.charge({
    amount: String(offer.usd ?? offer.credits),
    description: `Serpwright ${offer.operation}${offer.item ? ` ${offer.item}` : ""}: ` +
      `${offer.credits} credits`,
    metadata: {
      service: "serpwright",
      kind: "machine_payment",
      account_id: offer.accountId,
      operation: offer.operation,
      ...(offer.item ? { item: offer.item } : {}),
    },
    scope: `${offer.operation} ${offer.path} ${offer.accountId}${
      offer.item ? ` ${offer.item}` : ""
    }`,
  })(request);
  if (result.status === 402) {
    const response = result.challenge as Response;
    const header = response.headers.get("WWW-Authenticate") ?? "";
    const problem = await response.json().catch(() => null) as
      | { detail?: string; title?: string }
      | null;
    return {
      challenge: {
        header,
        challenge: gateway.lib.Challenge.deserialize(header) as unknown as Record<string, unknown>,
      },
      ...(credential && problem ? { refused: problem.detail ?? problem.title } : {}),
    } satisfies Handled;
  }
  const receiptHeader = (result.withReceipt(new Response(null)) as Response).headers.get(
    RECEIPT_HEADER,
  )!;
  const receipt = gateway.lib.Receipt.deserialize(receiptHeader) as Record<string, unknown>;
  const challengeId = gateway.lib.Credential.deserialize(credential!).challenge.id;
  return { paid: { header: receiptHeader, receipt, challengeId }, challengeId } satisfies Handled;
}

/** A stored receipt header read back (an idempotent replay of a paid start). */
export async function settledFromHeader(
  services: Services,
  header: string,
): Promise<SettledPayment | null> {
  const gateway = await gatewayOf(services);
  if (!gateway) return null;
  return { header, receipt: gateway.lib.Receipt.deserialize(header) as Record<string, unknown> };
}

/**
 * The credential of an MCP call (`_meta["org.paymentauth/credential"]`, the object mppx's MCP
 * client sends) in the header form the library's HTTP handler reads; null without one or with
 * machine payments off. One the library cannot serialize is passed on as malformed, so the answer
 * is the library's refusal and a fresh challenge.
 */
export async function credentialFromMcp(
  services: Services,
  value: unknown,
): Promise<string | null> {
  if (value === undefined || value === null) return null;
  const gateway = await gatewayOf(services);
  if (!gateway) return null;
  try {
    return gateway.lib.Credential.serialize(
      value as Parameters<typeof gateway.lib.Credential.serialize>[0],
    );
  } catch {
    return "Payment !";
  }
}

/** A receipt as MCP results carry it (`_meta["org.paymentauth/receipt"]`), as mppx renders it. */
export function mcpReceipt(payment: SettledPayment): Record<string, unknown> {
  return {
    [MCP_META.receipt]: {
      ...payment.receipt,
      ...(payment.challengeId ? { challengeId: payment.challengeId } : {}),
    },
  };
}
