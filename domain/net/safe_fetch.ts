/**
 * One outbound HTTP request to a user-supplied URL, made safely: the target goes through the
 * address guard, and the TCP connection goes to the very address the guard checked (a custom
 * `lookup` on `node:http`/`node:https`), so a DNS answer that changes between check and connect
 * (DNS rebinding) cannot redirect us. TLS still verifies the certificate against the host name
 * (SNI and Host stay the name). Redirects are never followed: the caller gets the 3xx and must
 * call again, which re-runs the guard on the new target. Time and size are capped.
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
  const family = pinned.includes(":") ? 6 : 4;
  const remaining = Math.max(1, timeoutMs - (performance.now() - t0));
  const headers: Record<string, string> = {
    "accept-encoding": "gzip, deflate, br",
    connection: "close",
    ...lowerKeys(opts.headers ?? {}),
    host: u.host,
  };
  const body = typeof opts.body === "string" ? new TextEncoder().encode(opts.body) : opts.body;
  if (body) headers["content-length"] = String(body.byteLength);
  const isHttps = u.protocol === "https:";
  const mod = isHttps ? https : http;

  return await new Promise<SafeResponse>((resolve, reject) => {
    let settled = false;
    let ttfbMs = 0;
    const finish = (err: unknown, res?: SafeResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(classify(err, u.href));
      else resolve(res!);
    };
    const req = mod.request({
      host: bareHostname(u),
      port: u.port ? Number(u.port) : isHttps ? 443 : 80,
      path: u.pathname + u.search,
      method: opts.method ?? "GET",
      headers,
      agent: false,
      // SNI carries the host name (never an IP literal, which TLS forbids in SNI).
      ...(isHttps
        ? { ca: opts.ca, ...(isIp(bareHostname(u)) ? {} : { servername: bareHostname(u) }) }
        : {}),
      // Connect to the address the guard checked, never a fresh DNS answer.
      lookup: (
        _host: string,
        o: { all?: boolean },
        cb: (...args: unknown[]) => void,
      ) => {
        if (o && o.all) cb(null, [{ address: pinned, family }]);
        else cb(null, pinned, family);
      },
    } as http.RequestOptions);
    const timer = setTimeout(() => {
      const err = new FetchFailedError("timeout", `Timed out after ${timeoutMs} ms`, u.href);
      finish(err);
      req.destroy();
    }, remaining);
    req.on("error", (e) => finish(e));
    req.on("response", (res: IncomingMessage) => {
      ttfbMs = performance.now() - t0;
      const status = res.statusCode ?? 0;
      const h = toHeaders(res.rawHeaders);
      const wantBody = (opts.method ?? "GET").toUpperCase() !== "HEAD" &&
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
        res.resume();
        res.on("error", () => {});
        done(new Uint8Array(0), false);
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
    if (body) req.write(body);
    req.end();
  });
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
