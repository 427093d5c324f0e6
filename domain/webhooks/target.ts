/**
 * Webhook targets go through the service's one address guard (`domain/net/address_guard.ts`),
 * at registration and again before every attempt, since a name's DNS answer can change after
 * it was registered.
 *
 * @module
 */
import { checkUrlTarget, PUBLIC_HOST_TEXT, type Resolver, TargetRefusedError } from "../net/mod.ts";
import { ApiError, type Deps } from "../platform/mod.ts";
import { DELIVERY_TIMEOUT_MS } from "./types.ts";

/** URLs longer than this are refused at registration; no real receiver needs more. */
export const MAX_URL_LENGTH = 2048;

/** Per-service overrides for tests only: a fake DNS and a shorter attempt timeout. */
export interface WebhookNetOverrides {
  resolver?: Resolver;
  timeoutMs?: number;
}

// Keyed by the service's deps object, so an override lives and dies with one test app and
// production code paths carry no extra parameters.
const overrides = new WeakMap<Deps, WebhookNetOverrides>();

/** Test hook: swaps DNS and the attempt timeout for one running service. */
export function setWebhookNetOverrides(deps: Deps, o: WebhookNetOverrides): void {
  overrides.set(deps, o);
}

/** How outbound webhook requests are made for this service. */
export function webhookNet(deps: Deps): {
  allowPrivate: boolean;
  requireHttps: boolean;
  resolver?: Resolver;
  timeoutMs: number;
} {
  const o = overrides.get(deps);
  const allowPrivate = deps.config.allowPrivateTargets;
  return {
    allowPrivate,
    // Plain http is a development convenience that comes with ALLOW_PRIVATE_TARGETS only.
    requireHttps: !allowPrivate,
    resolver: o?.resolver,
    timeoutMs: o?.timeoutMs ?? DELIVERY_TIMEOUT_MS,
  };
}

/**
 * Vets a URL for registration and returns its normalised form (fragment dropped: it is never
 * sent). Refusals are 400 `invalid_request` naming `url`; the message does not echo resolved
 * addresses, which would let a caller map internal DNS.
 */
export async function checkWebhookUrl(deps: Deps, input: string): Promise<string> {
  const net = webhookNet(deps);
  const trimmed = input.trim();
  if (trimmed.length > MAX_URL_LENGTH) {
    throw invalidUrl(`must be at most ${MAX_URL_LENGTH} characters`);
  }
  try {
    const { url } = await checkUrlTarget(trimmed, {
      allowPrivate: net.allowPrivate,
      requireHttps: net.requireHttps,
      resolver: net.resolver,
      signal: AbortSignal.timeout(5_000),
    });
    url.hash = "";
    return url.href;
  } catch (err) {
    if (err instanceof TargetRefusedError) throw invalidUrl(refusalText(err.reason));
    throw err;
  }
}

/**
 * Human text for a guard refusal, without addresses. A name that does not resolve and a name that
 * resolves to an internal address get the same words: telling them apart would let a caller probe
 * which internal host names exist.
 */
export function refusalText(reason: TargetRefusedError["reason"]): string {
  switch (reason) {
    case "invalid_url":
      return "must be an absolute URL";
    case "bad_scheme":
    case "https_required":
      return "must be an https URL";
    case "userinfo":
      return "must not contain credentials";
    case "private_address":
    case "dns_failure":
      return PUBLIC_HOST_TEXT;
  }
}

function invalidUrl(why: string): ApiError {
  return new ApiError("invalid_request", `url: ${why}`);
}
