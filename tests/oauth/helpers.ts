/**
 * The OAuth client side of the tests: a fake MCP host on loopback (a real `Deno.serve` that
 * publishes its Client ID Metadata Document and receives the redirect), driving the flow with
 * `oauth4webapi` (a maintained, spec-strict client library), plus a plain-HTTP driver of the
 * consent page for the tests that do not need a browser.
 */
import * as oauth from "oauth4webapi";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { freePort } from "../helpers/ports.ts";

const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** Starts the app with `PUBLIC_BASE_URL` equal to where it listens (the issuer must be real). */
export function startOAuthApp(env: Record<string, string> = {}): Promise<TestApp> {
  const port = freePort();
  return startTestApp({
    env: { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...env },
  });
}

export interface HostOptions {
  /** Replaces the metadata document's body (an oversized one, say). */
  docBody?: string;
  /** Serve https with the fixture certificate. */
  tls?: { cert: string; key: string };
  name?: string;
}

/** A fake MCP host: its metadata document, its redirect endpoint, and the client calls. */
export class FakeHost {
  readonly origin: string;
  readonly docUrl: string;
  readonly redirectUri: string;
  /** Paths the app (or the browser) requested from the host. */
  readonly hits: string[] = [];
  #callbacks: ((url: URL) => void)[] = [];
  #received: URL[] = [];
  #server: Deno.HttpServer;

  private constructor(server: Deno.HttpServer, origin: string) {
    this.#server = server;
    this.origin = origin;
    this.docUrl = `${origin}/client.json`;
    this.redirectUri = `${origin}/callback`;
  }

  static start(opts: HostOptions = {}): Promise<FakeHost> {
    return new Promise((resolve) => {
      const ref: { host?: FakeHost } = {};
      const handler = (req: Request) => {
        const host = ref.host!;
        const u = new URL(req.url);
        host.hits.push(u.pathname);
        if (u.pathname === "/client.json") {
          const body = opts.docBody ?? JSON.stringify({
            client_id: host.docUrl,
            client_name: opts.name ?? "Fake Host",
            client_uri: "https://fakehost.example",
            redirect_uris: [host.redirectUri],
            grant_types: ["authorization_code", "refresh_token"],
            response_types: ["code"],
            token_endpoint_auth_method: "none",
          });
          return new Response(body, {
            headers: { "content-type": "application/json", "cache-control": "max-age=60" },
          });
        }
        if (u.pathname === "/callback") {
          const url = new URL(u.pathname + u.search, host.origin);
          const waiter = host.#callbacks.shift();
          if (waiter) waiter(url);
          else host.#received.push(url);
          return new Response("<!doctype html><title>Connected</title><h1>Connected</h1>", {
            headers: { "content-type": "text/html" },
          });
        }
        return new Response("not found", { status: 404 });
      };
      const server = Deno.serve({
        hostname: "127.0.0.1",
        port: 0,
        onListen: () => {},
        ...(opts.tls ? { cert: opts.tls.cert, key: opts.tls.key } : {}),
      }, handler);
      const addr = server.addr as Deno.NetAddr;
      ref.host = new FakeHost(server, `${opts.tls ? "https" : "http"}://127.0.0.1:${addr.port}`);
      resolve(ref.host);
    });
  }

  /** The next redirect the browser brings to `/callback`. */
  nextCallback(): Promise<URL> {
    const ready = this.#received.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => this.#callbacks.push(resolve));
  }

  /** The client as a Client ID Metadata Document. */
  cimdClient(): oauth.Client {
    return { client_id: this.docUrl, token_endpoint_auth_method: "none" };
  }

  async close(): Promise<void> {
    await this.#server.shutdown();
  }
}

/** What discovery found, starting from a keyless MCP request's 401. */
export interface Discovered {
  as: oauth.AuthorizationServer;
  resource: string;
  scope: string | undefined;
  /** The 401's challenge parameters. */
  challenge: oauth.WWWAuthenticateChallengeParameters;
}

/** An MCP `tools/call` request body. */
export function toolCall(name: string, args: Record<string, unknown> = {}, id = 1): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args },
  });
}

/** MCP request headers (the 2025-11-25 transport: JSON or SSE accepted). */
export const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25",
};

/**
 * RFC 9728 + RFC 8414 discovery the way a host does it: a keyless call that needs a credential,
 * the `resource_metadata` of its 401, then the authorization server's metadata.
 */
export async function discover(mcpUrl: string): Promise<Discovered> {
  let challenge: oauth.WWWAuthenticateChallengeParameters | undefined;
  try {
    // The library parses the challenge; the request itself carries no credential.
    await oauth.protectedResourceRequest(
      "none",
      "POST",
      new URL(mcpUrl),
      new Headers(MCP_HEADERS),
      toolCall("account"),
      {
        ...insecure,
        [oauth.customFetch]: (url, init) => {
          const headers = new Headers(init.headers);
          headers.delete("authorization");
          return fetch(url, { ...init, headers } as RequestInit);
        },
      },
    ).then((r) => r.body?.cancel());
  } catch (err) {
    if (!(err instanceof oauth.WWWAuthenticateChallengeError)) throw err;
    await err.response.body?.cancel();
    challenge = err.cause.find((c) => c.scheme === "bearer")?.parameters;
  }
  if (!challenge?.resource_metadata) throw new Error("no resource_metadata in the 401 challenge");
  const prm = await oauth.processResourceDiscoveryResponse(
    new URL(mcpUrl),
    await fetch(challenge.resource_metadata),
  );
  const issuer = new URL(prm.authorization_servers![0]);
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }),
  );
  return { as, resource: prm.resource, scope: challenge.scope, challenge };
}

/** RFC 7591 registration as a native host on loopback. */
export async function registerDcr(
  as: oauth.AuthorizationServer,
  redirectUri: string,
  name = "Fake Host (registered)",
): Promise<oauth.Client> {
  const res = await oauth.dynamicClientRegistrationRequest(as, {
    redirect_uris: [redirectUri],
    application_type: "native",
    client_name: name,
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
  }, insecure);
  return await oauth.processDynamicClientRegistrationResponse(res);
}

/** One authorization attempt's secrets (PKCE verifier, state) and its URL. */
export interface Attempt {
  url: string;
  verifier: string;
  state: string;
}

/** The authorization URL with PKCE S256, state, scope and resource. */
export async function authorizationUrl(
  d: Discovered,
  client: oauth.Client,
  redirectUri: string,
  extra: Record<string, string> = {},
): Promise<Attempt> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const u = new URL(d.as.authorization_endpoint!);
  u.searchParams.set("response_type", "code");
  u.searchParams.set("client_id", client.client_id);
  u.searchParams.set("redirect_uri", redirectUri);
  u.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  u.searchParams.set("code_challenge_method", "S256");
  u.searchParams.set("state", state);
  u.searchParams.set("resource", d.resource);
  if (d.scope) u.searchParams.set("scope", d.scope);
  for (const [k, v] of Object.entries(extra)) u.searchParams.set(k, v);
  return { url: u.href, verifier, state };
}

/** Checks the redirect (state, iss) and exchanges the code with the PKCE verifier. */
export async function exchange(
  d: Discovered,
  client: oauth.Client,
  callback: URL,
  attempt: Attempt,
  redirectUri: string,
): Promise<oauth.TokenEndpointResponse> {
  const params = oauth.validateAuthResponse(d.as, client, callback, attempt.state);
  const res = await oauth.authorizationCodeGrantRequest(
    d.as,
    client,
    oauth.None(),
    params,
    redirectUri,
    attempt.verifier,
    { additionalParameters: { resource: d.resource }, ...insecure },
  );
  return await oauth.processAuthorizationCodeResponse(d.as, client, res);
}

/** A refresh with rotation. */
export async function refreshTokens(
  d: Discovered,
  client: oauth.Client,
  refreshToken: string,
): Promise<oauth.TokenEndpointResponse> {
  const res = await oauth.refreshTokenGrantRequest(d.as, client, oauth.None(), refreshToken, {
    additionalParameters: { resource: d.resource },
    ...insecure,
  });
  return await oauth.processRefreshTokenResponse(d.as, client, res);
}

/** RFC 7009 revocation. */
export async function revoke(
  d: Discovered,
  client: oauth.Client,
  token: string,
): Promise<void> {
  const res = await oauth.revocationRequest(d.as, client, oauth.None(), token, insecure);
  await oauth.processRevocationResponse(res);
}

/** A raw token endpoint request, for the refusals the library would not send. */
export async function tokenRequest(
  d: Discovered,
  params: Record<string, string>,
): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(d.as.token_endpoint!, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params),
  });
  return { status: res.status, body: await res.json() };
}

/** An MCP request with a bearer; the JSON-RPC answer (or the HTTP error body). */
export async function mcp(
  mcpUrl: string,
  bearer: string | null,
  body: string,
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(mcpUrl, {
    method: "POST",
    headers: { ...MCP_HEADERS, ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body,
  });
  const text = await res.text();
  const data = text.startsWith("event:") || text.includes("\ndata: ")
    ? JSON.parse(text.split("\n").find((l) => l.startsWith("data: "))!.slice(6))
    : JSON.parse(text);
  return { status: res.status, headers: res.headers, body: data };
}

/** The consent page's hidden fields and the cookie its GET set. */
interface PageState {
  request: string;
  csrf: string;
  cookie: string;
}

function pageState(html: string, cookie: string): PageState {
  const field = (name: string) =>
    new RegExp(`name="${name}"\\s+value="([^"]+)"`).exec(html)?.[1] ?? "";
  return { request: field("request"), csrf: field("csrf"), cookie };
}

/**
 * The human's side over plain HTTP (no browser): opens the authorization URL, signs in with
 * `key` or signs up with `email`, approves (or denies), and returns where the app is sent.
 */
export async function consentOverHttp(
  authorizationUrl: string,
  who: { key: string } | { email: string },
  answer: "approve" | "deny" = "approve",
): Promise<{ location: string; signInPage: string; consentPage: string }> {
  const get = await fetch(authorizationUrl, { redirect: "manual" });
  const signInPage = await get.text();
  if (get.status !== 200) throw new Error(`authorize: ${get.status} ${signInPage.slice(0, 300)}`);
  const cookie = (get.headers.get("set-cookie") ?? "").split(";")[0];
  const state = pageState(signInPage, cookie);
  const post = (fields: Record<string, string>) =>
    fetch(new URL("/oauth/authorize", authorizationUrl), {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: state.cookie },
      body: new URLSearchParams({ request: state.request, csrf: state.csrf, ...fields }),
    });
  const signed = await post(
    "key" in who ? { action: "key", api_key: who.key } : { action: "signup", email: who.email },
  );
  const consentPage = await signed.text();
  if (signed.status !== 200) {
    throw new Error(`sign-in: ${signed.status} ${consentPage.slice(0, 500)}`);
  }
  const done = await post({ action: answer });
  await done.body?.cancel();
  const location = done.headers.get("location");
  if (done.status !== 303 || !location) throw new Error(`approve: ${done.status}`);
  return { location, signInPage, consentPage };
}
