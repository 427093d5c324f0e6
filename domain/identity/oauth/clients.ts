/**
 * Who is asking: OAuth clients, known two ways.
 *
 * - **Client ID Metadata Documents** (draft-ietf-oauth-client-id-metadata-document, the MCP
 *   2026-07-28 default): the `client_id` is an https URL whose JSON this service fetches through
 *   the one address guard every crawl uses (domain/net/), at most 5 KB in 5 s, no redirect
 *   followed, and caches in KV for the document's `max-age` clamped to 1 min–1 h (5 min without
 *   one). Fetches are budgeted per host (`CLIENT_DOC_FETCHES_PER_HOST`), not per URL, so made-up
 *   query strings cannot turn sign-in pages into a fetch amplifier. Plain http and private
 *   addresses only with `ALLOW_PRIVATE_TARGETS` (tests, development).
 * - **Dynamic client registration** (RFC 7591; deprecated by MCP, kept for hosts that still use
 *   it): `application_type` optional (OIDC rules: `web` redirects to https, `native` to a
 *   loopback address or https; left out, it is inferred from the redirect URIs); an id is issued
 *   and the registration expires after a day unless an approval used it. The route rate-limits
 *   registrations per address block (IPv4 /24, IPv6 /48).
 *
 * Redirect URIs are https, or http on a loopback host (MCP's rule), and match exactly, except
 * that a loopback redirect's port may differ from the registered one (RFC 8252 §7.3: native apps
 * pick a free port at run time). `localhost` is treated as loopback too, as MCP clients use it.
 *
 * @module
 */
import { z } from "zod";
import type { RateDecision } from "../../../kv/rate_limiter.ts";
import { atomic, type Deps, describeIssue, keys, read } from "../../platform/mod.ts";
import { FetchFailedError, safeFetch, TargetRefusedError } from "../../net/mod.ts";
import { OAuthError } from "./errors.ts";
import { digest, expireInFor, LIFETIME, newSecret, PREFIX } from "./secrets.ts";
import type { CachedClientDoc, ClientMetadata, RegisteredClient } from "./types.ts";

/** The largest client metadata document fetched (bytes after decoding). */
export const CLIENT_DOC_MAX_BYTES = 5 * 1024;
/** How long the fetch of a client metadata document may take, DNS to last byte. */
export const CLIENT_DOC_TIMEOUT_MS = 5_000;
const DOC_TTL = { defaultMs: 300_000, minMs: 60_000, maxMs: 3_600_000 };

/**
 * Client metadata documents fetched per host (of the `client_id` URL) per window, whatever the
 * path or query: an unauthenticated `GET /oauth/authorize` must not make this service fetch a
 * host once per made-up URL. Cached documents do not count; past the budget the page answers 429
 * `invalid_client` with `Retry-After`.
 */
export const CLIENT_DOC_FETCHES_PER_HOST = { limit: 20, windowMs: 10 * 60_000 } as const;

/** Counts one fetch against a host's budget (the route passes the KV-backed limiter). */
export interface FetchBudget {
  hit(host: string): RateDecision | Promise<RateDecision>;
}
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2_000;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** Why a redirect URI is refused, or null when it is acceptable to register. */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > MAX_URI_LENGTH) return `is longer than ${MAX_URI_LENGTH} characters`;
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return "is not an absolute URI";
  }
  if (u.hash !== "" || uri.includes("#")) return "must not have a fragment";
  if (u.username !== "" || u.password !== "") return "must not carry user information";
  if (u.protocol === "https:") return null;
  if (u.protocol === "http:" && LOOPBACK_HOSTS.has(u.hostname)) return null;
  return "must use https, or http on a loopback address (127.0.0.1, [::1], localhost)";
}

/** True when the URI is http on a loopback host (its port is free, RFC 8252 §7.3). */
export function isLoopbackRedirect(uri: string): boolean {
  try {
    const u = new URL(uri);
    return u.protocol === "http:" && LOOPBACK_HOSTS.has(u.hostname);
  } catch {
    return false;
  }
}

/**
 * The registered URI a requested one matches: the same string, or, for loopback http URIs, the
 * same host, path and query on any port. Null when none does.
 */
export function matchRedirectUri(registered: string[], requested: string): string | null {
  if (registered.includes(requested)) return requested;
  if (!isLoopbackRedirect(requested)) return null;
  const want = new URL(requested);
  for (const r of registered) {
    if (!isLoopbackRedirect(r)) continue;
    const have = new URL(r);
    if (
      have.hostname === want.hostname && have.pathname === want.pathname &&
      have.search === want.search
    ) return requested;
  }
  return null;
}

const RedirectUris = z.array(z.string()).min(1).max(MAX_REDIRECT_URIS);

/** The fields of a client metadata document or registration this service reads. */
const ClientFields = z.object({
  client_name: z.string().trim().min(1).max(100).optional(),
  client_uri: z.string().max(MAX_URI_LENGTH).optional(),
  redirect_uris: RedirectUris,
  grant_types: z.array(z.string()).max(10).optional(),
  response_types: z.array(z.string()).max(10).optional(),
  token_endpoint_auth_method: z.string().max(100).optional(),
  scope: z.string().max(1_000).optional(),
});

type ClientFieldsIn = z.output<typeof ClientFields>;

/** Checks what the client asks for against what this server does; the refusal names the field. */
function checkFields(
  fields: ClientFieldsIn,
  badMetadata: (text: string) => OAuthError,
  badRedirect: (text: string) => OAuthError,
): void {
  for (const uri of fields.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw badRedirect(`redirect_uris: '${uri.slice(0, 200)}' ${problem}`);
  }
  const grants = fields.grant_types ?? ["authorization_code"];
  const unknownGrant = grants.find((g) => g !== "authorization_code" && g !== "refresh_token");
  if (unknownGrant !== undefined || !grants.includes("authorization_code")) {
    throw badMetadata(
      "grant_types: this server supports authorization_code (with PKCE) and refresh_token",
    );
  }
  const responses = fields.response_types ?? ["code"];
  if (responses.some((r) => r !== "code")) {
    throw badMetadata("response_types: this server supports code only");
  }
}

/**
 * The `application_type` of a registration that left it out: `native` when a redirect URI is on
 * this device (loopback http, or a private-use scheme, RFC 8252 §7.1, were one ever accepted),
 * `web` otherwise.
 */
export function inferApplicationType(redirectUris: string[]): "web" | "native" {
  const native = redirectUris.some((uri) => {
    if (isLoopbackRedirect(uri)) return true;
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase();
    return scheme !== undefined && scheme !== "https" && scheme !== "http";
  });
  return native ? "native" : "web";
}

/** `client_uri` when it is an https URL, else null (it is only ever shown as a host). */
function clientUriOf(value: string | undefined): string | null {
  if (value === undefined) return null;
  try {
    return new URL(value).protocol === "https:" ? value : null;
  } catch {
    return null;
  }
}

/**
 * Registers a client (RFC 7591). `body` is the parsed JSON request; throws `OAuthError`
 * `invalid_client_metadata` or `invalid_redirect_uri` naming the field.
 *
 * @example
 * ```ts
 * import type { Deps } from "../../platform/deps.ts";
 * declare const deps: Deps;
 * const client = await registerClient(deps, {
 *   application_type: "native", client_name: "My host", redirect_uris: ["http://127.0.0.1/cb"],
 * });
 * ```
 */
export async function registerClient(deps: Deps, body: unknown): Promise<RegisteredClient> {
  const badMetadata = (t: string) => new OAuthError("invalid_client_metadata", t);
  const badRedirect = (t: string) => new OAuthError("invalid_redirect_uri", t);
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw badMetadata("The body must be a JSON object of client metadata (RFC 7591)");
  }
  const givenType = (body as Record<string, unknown>).application_type;
  if (givenType !== undefined && givenType !== "web" && givenType !== "native") {
    throw badMetadata("application_type: 'web' or 'native' (or leave it out)");
  }
  const parsed = ClientFields.safeParse(body);
  if (!parsed.success) {
    const text = describeIssue(parsed.error.issues, "body", "body: invalid");
    throw text.startsWith("redirect_uris") ? badRedirect(text) : badMetadata(text);
  }
  const fields = parsed.data;
  checkFields(fields, badMetadata, badRedirect);
  // RFC 7591 has no application_type (OIDC Registration adds it), so older clients and the MCP
  // SDK's hosts leave it out: a client redirecting to this device (loopback) is native, else web.
  const appType = givenType ?? inferApplicationType(fields.redirect_uris);
  for (const uri of fields.redirect_uris) {
    // OIDC Registration §2: web clients redirect to https hosts, native ones may use loopback.
    if (appType === "web" && isLoopbackRedirect(uri)) {
      throw badRedirect(
        `redirect_uris: '${uri.slice(0, 200)}' is a loopback address; register it with ` +
          "application_type 'native'",
      );
    }
  }
  const now = deps.clock.now();
  const client: RegisteredClient = {
    clientId: newSecret("client", 24),
    clientName: fields.client_name ?? "Unnamed app",
    redirectUris: fields.redirect_uris,
    kind: "dcr",
    clientUri: clientUriOf(fields.client_uri),
    applicationType: appType,
    createdAt: now,
    usedAt: null,
    expiresAt: now + LIFETIME.unusedClientMs,
  };
  const key = keys.oauthClient(client.clientId);
  const res = await atomic(deps.kv)
    .check({ key, versionstamp: null })
    .set(key, client, { expireIn: LIFETIME.unusedClientMs })
    .commit();
  if (!res.ok) throw new OAuthError("temporarily_unavailable", "Try again", 503);
  return client;
}

/** The RFC 7591 §3.2.1 answer for a registered client. */
export function registrationResponse(client: RegisteredClient) {
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(client.createdAt / 1000),
    client_name: client.clientName,
    redirect_uris: client.redirectUris,
    application_type: client.applicationType,
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    // Public clients: PKCE proves possession of the code; no secret is issued.
    token_endpoint_auth_method: "none",
    ...(client.clientUri ? { client_uri: client.clientUri } : {}),
  };
}

/** A URL-shaped `client_id`: a Client ID Metadata Document. */
export function isMetadataDocumentId(clientId: string): boolean {
  return clientId.startsWith("https://") || clientId.startsWith("http://");
}

/**
 * The client named by `clientId`: its metadata document (fetched or cached) or its registration.
 * Throws `OAuthError` `invalid_client` when it is unknown, unreachable or invalid.
 */
export function findClient(
  deps: Deps,
  clientId: string,
  budget?: FetchBudget,
): Promise<ClientMetadata> {
  if (clientId.length === 0 || clientId.length > MAX_URI_LENGTH) {
    return Promise.reject(new OAuthError("invalid_request", "client_id: missing or too long"));
  }
  if (isMetadataDocumentId(clientId)) return clientFromDocument(deps, clientId, budget);
  return registeredClient(deps, clientId);
}

/**
 * When a registration ends (client_life.ts moves it with its grants); a record from before the
 * field: a day after its registration if unused, never if used (until its grants move it).
 */
export function registrationEnd(client: RegisteredClient): number {
  return client.expiresAt ??
    (client.usedAt === null ? client.createdAt + LIFETIME.unusedClientMs : Infinity);
}

async function registeredClient(deps: Deps, clientId: string): Promise<RegisteredClient> {
  const entry = clientId.startsWith(PREFIX.client)
    ? await read(deps.kv, keys.oauthClient(clientId))
    : null;
  const client = entry?.value ?? null;
  // KV's own expiry is lazy: a registration past its end is gone whatever KV still holds, and
  // is deleted now (unless it just changed).
  const ended = client !== null && registrationEnd(client) <= deps.clock.now();
  if (ended) await atomic(deps.kv).check(entry!).delete(entry!.key).commit();
  if (!client || ended) {
    throw new OAuthError(
      "invalid_client",
      "Unknown client_id (a registration expires a day after it was made, or after its last " +
        "connected app ended; register again)",
    );
  }
  return client;
}

/** Checks the `client_id` URL itself before anything is fetched. */
function checkDocumentUrl(deps: Deps, clientId: string): URL {
  const bad = (t: string) => new OAuthError("invalid_client", `client_id: ${t}`);
  let u: URL;
  try {
    u = new URL(clientId);
  } catch {
    throw bad("not a valid URL");
  }
  const plainAllowed = deps.config.allowPrivateTargets;
  if (u.protocol !== "https:" && !(plainAllowed && u.protocol === "http:")) {
    throw bad("a Client ID Metadata Document URL must use https");
  }
  if (u.pathname === "/" || u.hash !== "" || u.username !== "" || u.password !== "") {
    throw bad("a Client ID Metadata Document URL needs a path, and no fragment or user info");
  }
  if (/\/\.\.?(\/|$)/.test(u.pathname)) throw bad("the URL must not hold dot segments");
  // The document must name itself by the exact string sent, so the URL is not normalised.
  if (u.href !== clientId) throw bad("the URL must be in normalised form");
  return u;
}

const DocumentFields = ClientFields.extend({
  client_id: z.string(),
  client_name: z.string().trim().min(1).max(100),
});

/**
 * The Client ID Metadata Document at `clientId`, from the KV cache while fresh, else fetched
 * through the address guard and validated: JSON, `client_id` equal to the URL, `client_name`,
 * exact `redirect_uris`, a public client (`token_endpoint_auth_method` `none`).
 */
export async function clientFromDocument(
  deps: Deps,
  clientId: string,
  budget?: FetchBudget,
): Promise<CachedClientDoc> {
  const url = checkDocumentUrl(deps, clientId);
  const cacheKey = keys.oauthClientDoc(digest(clientId));
  const now = deps.clock.now();
  const cached = (await read(deps.kv, cacheKey)).value;
  if (cached && cached.clientId === clientId && now < cached.freshUntil) return cached;

  const bad = (t: string) => new OAuthError("invalid_client", `Client metadata document: ${t}`);
  if (budget) {
    const host = url.hostname.toLowerCase();
    const decision = await budget.hit(host);
    if (!decision.allowed) {
      throw new OAuthError(
        "invalid_client",
        `Client metadata document: too many fetched from ${host} (at most ${decision.limit} ` +
          `every ${CLIENT_DOC_FETCHES_PER_HOST.windowMs / 60_000} minutes); retry in ` +
          `${decision.retryAfter} s`,
        429,
        { "Retry-After": String(decision.retryAfter) },
      );
    }
  }
  let res;
  try {
    res = await safeFetch(clientId, {
      allowPrivate: deps.config.allowPrivateTargets,
      requireHttps: !deps.config.allowPrivateTargets,
      resolver: deps.resolver,
      timeoutMs: CLIENT_DOC_TIMEOUT_MS,
      maxBytes: CLIENT_DOC_MAX_BYTES,
      failOnTooLarge: true,
      headers: { accept: "application/json" },
    });
  } catch (err) {
    if (err instanceof TargetRefusedError) {
      throw bad("its URL does not resolve to public internet addresses only");
    }
    if (err instanceof FetchFailedError && err.kind === "too_large") {
      throw bad(`larger than ${CLIENT_DOC_MAX_BYTES} bytes`);
    }
    if (err instanceof FetchFailedError && err.kind === "timeout") {
      throw bad(`not fetched within ${CLIENT_DOC_TIMEOUT_MS / 1000} s`);
    }
    throw bad("could not be fetched");
  }
  if (res.status !== 200) throw bad(`its URL answered HTTP ${res.status}, not 200`);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(res.body));
  } catch {
    throw bad("not valid JSON");
  }
  const parsed = DocumentFields.safeParse(json);
  if (!parsed.success) {
    throw bad(describeIssue(parsed.error.issues, "document", "document: invalid"));
  }
  const doc = parsed.data;
  if (doc.client_id !== clientId) throw bad("its client_id is not exactly its own URL");
  const method = doc.token_endpoint_auth_method ?? "none";
  if (method !== "none") {
    throw bad(`token_endpoint_auth_method '${method}' is not supported (public clients: none)`);
  }
  checkFields(doc, bad, bad);
  const fresh: CachedClientDoc = {
    clientId,
    clientName: doc.client_name,
    redirectUris: doc.redirect_uris,
    kind: "cimd",
    clientUri: clientUriOf(doc.client_uri),
    fetchedAt: now,
    freshUntil: now + maxAgeOf(res.headers.get("cache-control")),
  };
  await atomic(deps.kv)
    .set(cacheKey, fresh, { expireIn: expireInFor(fresh.freshUntil, now, 0) })
    .commit();
  return fresh;
}

/** The document's `max-age`, clamped; `no-store`/`no-cache` still cache for the minimum. */
function maxAgeOf(cacheControl: string | null): number {
  const m = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cacheControl ?? "");
  if (!m) return DOC_TTL.defaultMs;
  return Math.min(DOC_TTL.maxMs, Math.max(DOC_TTL.minMs, Number(m[1]) * 1000));
}
