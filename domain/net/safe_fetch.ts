/**
 * One outbound HTTP request to a user-supplied URL, made safely: the target goes through the
 * address guard, and the TCP connection goes to the very address the guard checked (a custom
 * `lookup` on `node:http`/`node:https`), so a DNS answer that changes between check and connect
 * (DNS rebinding) cannot redirect us. TLS still verifies the certificate against the host name
 * (SNI and Host stay the name). Redirects are never followed: the caller gets the 3xx and must
 * call again, which re-runs the guard on the new target. Time and size are capped. A request is
 * one-shot (`connection: close`) unless the caller passes a `pool` (pool.ts): its kept-alive
 * connections are each reused only for requests whose guard check pinned the same address.
 *
 * Residual risk: none known for the connect step; an operator who wants defence in depth can
 * additionally run the process with `--deny-net=10.0.0.0/8,...` style flags (Deno's permission
 * system applies to these sockets too).
 *
 * @module
 */
import http from "node:http";
import https from "node:https";
import type { IncomingMessage } from "node:http";
import zlib from "node:zlib";
import { bareHostname, checkUrlTarget, type Resolver } from "./address_guard.ts";
import { type ConnectionPool, pinnedLookup } from "./pool.ts";

export { type Resolver, TargetRefusedError } from "./address_guard.ts";

/** Why a request failed after the guard let it through. */
export type FetchFailureKind = "timeout" | "network" | "tls" | "too_large" | "decode";

export class FetchFailedError extends Error {
  constructor(readonly kind: FetchFailureKind, message: string, readonly url?: string) {
    super(message);
    this.name = "FetchFailedError";
  }
}

export interface SafeFetchOptions {
  /** Lift the address guard (dev/tests only). */
  allowPrivate: boolean;
  /** Lift it for loopback addresses only (see `TargetOptions.allowLoopback`). */
  allowLoopback?: boolean;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Deadline for the whole exchange, DNS to last body byte. Default 10 s. */
  timeoutMs?: number;
  /** Cap on the (decoded) body; longer bodies are cut and `truncated` set. Default 5 MiB. */
  maxBytes?: number;
  /** Throw `FetchFailedError("too_large")` instead of truncating. */
  failOnTooLarge?: boolean;
  resolver?: Resolver;
  requireHttps?: boolean;
  /** Called with status and headers; return false to skip the body (e.g. non-HTML). */
  shouldReadBody?: (status: number, headers: Headers) => boolean;
  /** Extra trusted CA certificate (PEM) for private test servers. */
  ca?: string;
  /**
   * Kept-alive connections to reuse (a crawl step's); without it the request is one-shot
   * (`connection: close`), as webhook deliveries and OAuth client documents want.
   */
  pool?: ConnectionPool;
}

export interface SafeResponse {
  url: string;
  status: number;
  /** Response headers as received (Content-Encoding kept even though the body is decoded). */
  headers: Headers;
  body: Uint8Array;
  truncated: boolean;
  /** Milliseconds from request start (incl. DNS) to response headers. */
  ttfbMs: number;
  totalMs: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_|HOSTNAME_MISMATCH)/;

function classify(err: unknown, url: string): FetchFailedError {
  if (err instanceof FetchFailedError) return err;
  const e = err as { code?: string; message?: string };
  const code = e?.code ?? "";
  const msg = e?.message ?? String(err);
  if (TLS_CODES.test(code) || /certificate|tls|ssl|handshake/i.test(msg)) {
    return new FetchFailedError("tls", `TLS failure: ${msg}`, url);
  }
  return new FetchFailedError("network", `Network failure: ${code || msg}`, url);
}

function toHeaders(raw: string[]): Headers {
  const h = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      h.append(raw[i], raw[i + 1]);
    } catch {
      // A header value Fetch's Headers rejects (e.g. control chars) is dropped, not fatal.
    }
  }
  return h;
}

/**
 * Fetches `url` once, without following redirects. Throws `TargetRefusedError` when the guard
 * refuses the target and `FetchFailedError` for timeouts, network and TLS failures.
 */
export async function safeFetch(url: string, opts: SafeFetchOptions): Promise<SafeResponse> {
  const t0 = performance.now();
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const dnsAbort = new AbortController();
  const dnsTimer = setTimeout(() => dnsAbort.abort(), timeoutMs);
  let target;
  try {
    target = await checkUrlTarget(url, {
      allowPrivate: opts.allowPrivate,
      allowLoopback: opts.allowLoopback,
      requireHttps: opts.requireHttps,
      resolver: opts.resolver,
      signal: dnsAbort.signal,
    });
  } finally {
    clearTimeout(dnsTimer);
  }
  const u = target.url;
  const pinned = target.addresses[0];
  const isHttps = u.protocol === "https:";
  const port = u.port ? Number(u.port) : isHttps ? 443 : 80;
  // SNI carries the host name (never an IP literal, which TLS forbids in SNI).
  const servername = isHttps && !isIp(bareHostname(u)) ? bareHostname(u) : undefined;
  const agent =
    opts.pool?.agentFor({ https: isHttps, address: pinned, port, servername, ca: opts.ca }) ??
      null;
  const body = typeof opts.body === "string" ? new TextEncoder().encode(opts.body) : opts.body;
  const exchange: Exchange = {
    url: u,
    pinned,
    port,
    servername,
    body,
    https: isHttps,
    t0,
    timeoutMs,
    maxBytes,
  };
  try {
    return await exchangeOnce(exchange, opts, agent);
  } catch (e) {
    // A kept-alive connection the server closed while idle fails before any answer: the request
    // is sent again once, on a new connection to the same checked address.
    if (!(e instanceof StaleConnectionError)) throw e;
    return await exchangeOnce(exchange, opts, null);
  }
}

/** One request's fixed parts, shared by its first try and its retry on a new connection. */
interface Exchange {
  url: URL;
  pinned: string;
  port: number;
  servername?: string;
  body?: Uint8Array;
  https: boolean;
  t0: number;
  timeoutMs: number;
  maxBytes: number;
}

/** A reused connection that failed before the response began. */
class StaleConnectionError extends Error {}

/**
 * Bytes of an unwanted body (or a HEAD answer's nothing) read to the end so a kept-alive
 * connection can serve the next request; a longer or unsized body closes the connection instead.
 */
const DRAIN_BYTES = 64 * 1024;
/** How long draining an unwanted body may take before its connection is closed, ms. */
const DRAIN_MS = 2_000;

function exchangeOnce(
  x: Exchange,
  opts: SafeFetchOptions,
  agent: http.Agent | null,
): Promise<SafeResponse> {
  const { url: u, pinned, t0, timeoutMs, maxBytes } = x;
  const headers: Record<string, string> = {
    "accept-encoding": "gzip, deflate, br",
    // One-shot unless the caller opted into kept-alive connections.
    ...(agent ? {} : { connection: "close" }),
    ...lowerKeys(opts.headers ?? {}),
    host: u.host,
  };
  if (x.body) headers["content-length"] = String(x.body.byteLength);
  const mod = x.https ? https : http;
  const method = (opts.method ?? "GET").toUpperCase();
  const remaining = Math.max(1, t0 + timeoutMs - performance.now());

  return new Promise<SafeResponse>((resolve, reject) => {
    let settled = false;
    let answered = false;
    let ttfbMs = 0;
    // Only a request that may be sent twice (GET, HEAD) is, and only when nothing came back.
    const stale = (err: unknown) =>
      !answered && req.reusedSocket && (method === "GET" || method === "HEAD") &&
      !(err instanceof FetchFailedError);
    const finish = (err: unknown, res?: SafeResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err && stale(err)) reject(new StaleConnectionError(String(err)));
      else if (err) reject(classify(err, u.href));
      else resolve(res!);
    };
    const req = mod.request({
      host: bareHostname(u),
      port: x.port,
      path: u.pathname + u.search,
      method,
      headers,
      agent: agent ?? false,
      ...(x.https ? { ca: opts.ca, ...(x.servername ? { servername: x.servername } : {}) } : {}),
      // Connect to the address the guard checked, never a fresh DNS answer.
      lookup: pinnedLookup(pinned),
    } as http.RequestOptions);
    // Set while an unwanted body drains: the answer is known then, and the deadline gives it.
    let answerNow: (() => void) | null = null;
    const timer = setTimeout(() => {
      const err = new FetchFailedError("timeout", `Timed out after ${timeoutMs} ms`, u.href);
      if (answerNow) answerNow();
      else finish(err);
      req.destroy();
    }, remaining);
    req.on("error", (e) => finish(e));
    req.on("response", (res: IncomingMessage) => {
      answered = true;
      ttfbMs = performance.now() - t0;
      const status = res.statusCode ?? 0;
      const h = toHeaders(res.rawHeaders);
      const wantBody = method !== "HEAD" &&
        (opts.shouldReadBody ? opts.shouldReadBody(status, h) : true);
      const done = (bytes: Uint8Array, truncated: boolean) =>
        finish(null, {
          url: u.href,
          status,
          headers: h,
          body: bytes,
          truncated,
          ttfbMs,
          totalMs: performance.now() - t0,
        });
      if (!wantBody) {
        if (agent && drainable(method, status, h)) {
          // Answered once the connection is free again, so the next request can have it.
          answerNow = () => done(new Uint8Array(0), false);
          drain(req, res, answerNow);
          return;
        }
        res.on("error", () => {});
        done(new Uint8Array(0), false);
        res.resume();
        req.destroy();
        return;
      }
      readBody(res, h.get("content-encoding"), maxBytes).then(({ bytes, truncated }) => {
        if (truncated) req.destroy();
        if (truncated && opts.failOnTooLarge) {
          finish(new FetchFailedError("too_large", `Body exceeds ${maxBytes} bytes`, u.href));
        } else done(bytes, truncated);
      }, (e) => {
        req.destroy();
        finish(e);
      });
    });
    if (x.body) req.write(x.body);
    req.end();
  });
}

/** Whether an unwanted body is small and sized, so reading it keeps the connection usable. */
function drainable(method: string, status: number, h: Headers): boolean {
  if (method === "HEAD" || status === 204 || status === 304) return true;
  const len = h.get("content-length");
  return len !== null && /^\d+$/.test(len.trim()) && Number(len) <= DRAIN_BYTES;
}

/**
 * Reads an unwanted body to its end (the agent then reuses the connection), then calls `then`;
 * a body that errs or takes longer than DRAIN_MS closes the connection instead.
 */
function drain(req: http.ClientRequest, res: IncomingMessage, then: () => void): void {
  let called = false;
  const once = (ended: boolean) => {
    if (called) return;
    called = true;
    clearTimeout(timer);
    if (!ended) req.destroy();
    then();
  };
  const timer = setTimeout(() => once(false), DRAIN_MS);
  res.on("end", () => once(true));
  res.on("error", () => once(false));
  res.on("close", () => once(false));
  res.resume();
}

function isIp(host: string): boolean {
  return host.includes(":") || /^\d+\.\d+\.\d+\.\d+$/.test(host);
}

function lowerKeys(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}

/** Reads the body through a decoder, stopping at `maxBytes` decoded bytes (zip bombs included). */
function readBody(
  res: IncomingMessage,
  encoding: string | null,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const enc = (encoding ?? "").trim().toLowerCase();
    // deno-lint-ignore no-explicit-any
    let stream: any = res;
    if (enc === "gzip" || enc === "x-gzip") stream = res.pipe(zlib.createGunzip());
    else if (enc === "deflate") stream = res.pipe(zlib.createInflate());
    else if (enc === "br") stream = res.pipe(zlib.createBrotliDecompress());
    const chunks: Uint8Array[] = [];
    let size = 0;
    let ended = false;
    const end = (truncated: boolean) => {
      if (ended) return;
      ended = true;
      const out = new Uint8Array(Math.min(size, maxBytes));
      let off = 0;
      for (const c of chunks) {
        const n = Math.min(c.byteLength, out.byteLength - off);
        out.set(n === c.byteLength ? c : c.subarray(0, n), off);
        off += n;
        if (off >= out.byteLength) break;
      }
      resolve({ bytes: out, truncated });
    };
    stream.on("data", (chunk: Uint8Array) => {
      if (ended) return;
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size > maxBytes) {
        end(true);
        if (stream !== res) stream.destroy();
        res.destroy();
      }
    });
    stream.on("end", () => end(false));
    stream.on("error", (e: Error) => {
      if (ended) return;
      ended = true;
      reject(
        stream !== res ? new FetchFailedError("decode", `Bad ${enc} body: ${e.message}`) : e,
      );
    });
    res.on("error", (e: Error) => {
      if (ended) return;
      ended = true;
      reject(e);
    });
  });
}
