/**
 * Every request a rendered page makes goes through the service's one address guard, and is
 * answered by us, not by Chromium's network stack: the route handler fetches the resource with
 * `safeFetch` (the guard vets the host, the connection goes to the very address it checked, the
 * body is capped) and fulfils the browser's request with that response. Chromium itself never
 * connects anywhere, so its own DNS cannot race ours (DNS rebinding); the launch flags in
 * `chromium.ts` black-hole whatever might slip past (preconnects, a future request type).
 *
 * - Refused targets (private, loopback, link-local such as 169.254.169.254, bad schemes, DNS
 *   failures) are aborted and recorded, never "just logged".
 * - WebSockets cannot be fetched through the guard: refused and recorded. Service workers are
 *   blocked by the context options (`serviceWorkers: "block"`).
 * - Redirects of subresources are followed here, each hop through the guard again (a redirect
 *   fulfilled to Chromium would be followed by its own network stack). A redirect of the page's
 *   own navigation is not followed: it is recorded in `navigationRedirect` and the renderer
 *   navigates there afresh, so the page's URL stays true.
 * - Caps per page: requests, total bytes, bytes per response; beyond them requests are aborted.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { BrowserContext, Request } from "playwright-core";
import { FetchFailedError, type Resolver, safeFetch, TargetRefusedError } from "../net/mod.ts";
import type { SimulatedLink } from "./throttling.ts";

export interface NetworkPolicy {
  /** Lift the guard (dev only; ALLOW_PRIVATE_TARGETS=1). */
  allowPrivate: boolean;
  /** Lift it for loopback only (test fixtures); private and link-local stay refused. */
  allowLoopback?: boolean;
  resolver?: Resolver;
  /** Per request, DNS to last byte. Default 10 s. */
  requestTimeoutMs?: number;
  /** Per response body (decoded). Default 5 MiB. */
  maxResponseBytes?: number;
  /** All responses of one page together. Default 20 MiB. */
  maxPageBytes?: number;
  /** Requests of one page. Default 300. */
  maxRequests?: number;
  /** Hops of a subresource redirect chain. Default 5. */
  maxRedirects?: number;
}

/** A request the guard or a cap refused. */
export interface BlockedRequest {
  url: string;
  /** A guard refusal reason (`private_address`, `bad_scheme`, ...) or a cap/`websocket`. */
  reason: string;
}

/** What the page's network did, read by the renderer once the page settled. */
export interface NetworkLog {
  /** Requests answered (fulfilled), redirects hops included once per browser request. */
  requests: number;
  /** Bytes on the wire: Content-Length of encoded responses, else the body length. */
  transferBytes: number;
  blocked: BlockedRequest[];
  blockedCount: number;
  /** Requests the guard let through that failed (timeout, network, tls, too_large). */
  failedCount: number;
  /** The first main-frame document response: the raw HTML the crawler would have seen. */
  document: { url: string; status: number; headers: Headers; body: Uint8Array } | null;
  /** Where the page's navigation redirected (not followed by the browser), if it did. */
  navigationRedirect: string | null;
  inFlight: number;
  /** `performance.now()` of the last request start or end (the renderer waits for quiet). */
  lastActivity: number;
}

const KEEP_LIST = 50;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Hop-by-hop and encoding headers: the body we hand over is already decoded and whole. */
const DROP_RESPONSE = new Set([
  "content-encoding",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
]);
const DROP_REQUEST = new Set([
  "host",
  "connection",
  "content-length",
  "accept-encoding",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
  "proxy-authorization",
  "proxy-connection",
]);

/**
 * Installs the guard on `context` (every page, frame and popup of it) and returns the live log.
 * `link` delays each response per the lab throttling profile.
 */
export async function guardNetwork(
  context: BrowserContext,
  policy: NetworkPolicy,
  link: SimulatedLink,
): Promise<NetworkLog> {
  const log: NetworkLog = {
    requests: 0,
    transferBytes: 0,
    blocked: [],
    blockedCount: 0,
    failedCount: 0,
    document: null,
    navigationRedirect: null,
    inFlight: 0,
    lastActivity: performance.now(),
  };
  const maxRequests = policy.maxRequests ?? 300;
  const maxPageBytes = policy.maxPageBytes ?? 20 * 1024 * 1024;
  const maxRedirects = policy.maxRedirects ?? 5;
  const block = (url: string, reason: string) => {
    log.blockedCount++;
    if (log.blocked.length < KEEP_LIST) log.blocked.push({ url: url.slice(0, 500), reason });
  };

  await context.routeWebSocket(() => true, (ws) => {
    block(ws.url(), "websocket");
    ws.close({ code: 1008, reason: "not allowed" });
  });

  await context.route("**/*", async (route) => {
    const req = route.request();
    const requestedAt = performance.now();
    log.inFlight++;
    log.lastActivity = requestedAt;
    try {
      if (log.requests >= maxRequests) {
        block(req.url(), "request_cap");
        await route.abort("blockedbyclient");
        return;
      }
      log.requests++;
      const isDocument = isMainNavigation(req);
      const headers = forwardHeaders(await req.allHeaders());
      let method = req.method();
      let body: Uint8Array | undefined = req.postDataBuffer() ?? undefined;
      let url = req.url();
      let res;
      for (let hop = 0;; hop++) {
        res = await safeFetch(url, {
          allowPrivate: policy.allowPrivate,
          allowLoopback: policy.allowLoopback,
          resolver: policy.resolver,
          method,
          headers,
          body,
          timeoutMs: policy.requestTimeoutMs ?? 10_000,
          maxBytes: policy.maxResponseBytes ?? 5 * 1024 * 1024,
          failOnTooLarge: true,
        });
        const location = res.headers.get("location");
        if (!REDIRECTS.has(res.status) || location === null) break;
        const next = new URL(location, url).href;
        if (isDocument) {
          log.navigationRedirect = next;
          await route.abort("aborted");
          return;
        }
        if (hop >= maxRedirects) throw new FetchFailedError("network", "Too many redirects", url);
        if (
          res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")
        ) {
          method = "GET";
          body = undefined;
        }
        url = next;
      }
      const encoded = res.headers.get("content-encoding");
      const declared = Number(res.headers.get("content-length"));
      const bytes = encoded && Number.isFinite(declared) && declared > 0
        ? declared
        : res.body.byteLength;
      if (log.transferBytes + bytes > maxPageBytes) {
        block(req.url(), "page_bytes_cap");
        await route.abort("blockedbyclient");
        return;
      }
      log.transferBytes += bytes;
      if (isDocument && log.document === null) {
        log.document = { url, status: res.status, headers: res.headers, body: res.body };
      }
      await link.deliver(requestedAt, bytes);
      await route.fulfill({
        status: res.status,
        headers: responseHeaders(res.headers),
        body: Buffer.from(res.body.buffer, res.body.byteOffset, res.body.byteLength),
      });
    } catch (e) {
      if (e instanceof TargetRefusedError) {
        block(e.url ?? req.url(), e.reason);
        await route.abort("blockedbyclient").catch(() => {});
      } else {
        if (e instanceof FetchFailedError) log.failedCount++;
        await route.abort("failed").catch(() => {}); // the page may be gone already
      }
    } finally {
      log.inFlight--;
      log.lastActivity = performance.now();
    }
  });
  return log;
}

/** A navigation of a top-level frame (the page itself or a popup), not an iframe's. */
function isMainNavigation(req: Request): boolean {
  if (!req.isNavigationRequest()) return false;
  try {
    return req.frame().parentFrame() === null;
  } catch {
    return false; // service worker requests have no frame
  }
}

function forwardHeaders(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    const key = k.toLowerCase();
    if (key.startsWith(":") || DROP_REQUEST.has(key)) continue;
    out[key] = v;
  }
  return out;
}

function responseHeaders(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((v, k) => {
    if (!DROP_RESPONSE.has(k) && k !== "set-cookie") out[k] = v;
  });
  const cookies = h.getSetCookie();
  // playwright-core splits a fulfilled set-cookie header on newlines.
  if (cookies.length > 0) out["set-cookie"] = cookies.join("\n");
  return out;
}
