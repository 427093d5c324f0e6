/**
 * The one address guard for every outbound request to a user-supplied URL (site crawls, webhook
 * delivery). It exists because those requests leave our servers: without it a caller could make
 * us fetch loopback services, the private network or the cloud metadata endpoint (SSRF).
 *
 * The guard is pure classification plus DNS resolution. It returns the addresses it checked so
 * the caller can connect to exactly those (see `safe_fetch.ts`), which closes the DNS-rebinding
 * window between "check" and "connect".
 *
 * @module
 */
import type { Resolver } from "./types.ts";
import ipaddr from "ipaddr.js";
// Past platform/mod.ts on purpose: through it (deps.ts names the render pool) an import circle.
import { JobFailure } from "../platform/job_failure.ts";

export type { Resolver };

/** Why a target was refused; stable strings callers can branch on or show. */
export type RefusalReason =
  | "invalid_url"
  | "bad_scheme"
  | "https_required"
  | "userinfo"
  | "private_address"
  | "dns_failure";

/**
 * Thrown when a URL must not be fetched. `reason` says why; the message is human-readable. A job
 * that meets it fails with code `target_refused`.
 */
export class TargetRefusedError extends JobFailure {
  constructor(readonly reason: RefusalReason, message: string, readonly url?: string) {
    super("target_refused", message);
    this.name = "TargetRefusedError";
  }
}

export interface TargetOptions {
  /** Lift the address check (dev and tests only; from env ALLOW_PRIVATE_TARGETS=1). */
  allowPrivate: boolean;
  /**
   * Lift it for loopback only (127.0.0.0/8, ::1): local test fixtures, while private networks,
   * link-local (169.254.169.254) and the rest stay refused, so tests can prove the refusal.
   */
  allowLoopback?: boolean;
  /** Refuse plain http (webhooks). */
  requireHttps?: boolean;
  /** DNS resolver; defaults to `Deno.resolveDns` A + AAAA. */
  resolver?: Resolver;
  /** Aborts the DNS lookup (the caller's request deadline). */
  signal?: AbortSignal;
}

export interface CheckedTarget {
  /** The parsed (WHATWG-normalised) URL. */
  url: URL;
  /** Every address the host resolved to, all of them checked; connect to one of these only. */
  addresses: string[];
}

/**
 * The one refusal text for hosts that are not public and hosts that do not resolve (webhook
 * registration, project creation): the same words for both, so a caller cannot probe which
 * internal host names exist.
 */
export const PUBLIC_HOST_TEXT = "must name a host that resolves to public internet addresses only";

/** IPv6 global unicast is 2000::/3; everything outside it is special-purpose or unassigned. */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR("2000::/3");

/**
 * True when `ip` is a publicly routable unicast address. Anything else (loopback, private,
 * link-local incl. 169.254.169.254, CGNAT, multicast, reserved, documentation, NAT64, 6to4,
 * Teredo, unspecified, broadcast, IPv4-mapped private) is refused, as is anything unparseable:
 * the guard fails closed. IPv4 in decimal/octal/hex forms is normalised the way browsers and
 * WHATWG URL do before classification.
 */
export function isPublicAddress(ip: string): boolean {
  let text = ip.trim();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  if (text.includes(":")) {
    if (text.includes("%")) return false; // zone ids only exist on link-local scopes
    if (!ipaddr.IPv6.isValid(text)) return false;
    const v6 = ipaddr.IPv6.parse(text);
    if (v6.isIPv4MappedAddress()) return isPublicV4(v6.toIPv4Address());
    if (!v6.match(GLOBAL_UNICAST_V6)) return false;
    return v6.range() === "unicast";
  }
  let normalised: string;
  try {
    normalised = new URL(`http://${text}/`).hostname;
  } catch {
    return false;
  }
  if (!ipaddr.IPv4.isValidFourPartDecimal(normalised)) return false;
  return isPublicV4(ipaddr.IPv4.parse(normalised));
}

function isPublicV4(v4: ipaddr.IPv4): boolean {
  return v4.range() === "unicast";
}

/** Default resolver: A and AAAA through the system's configured name servers. */
export const denoResolver: Resolver = async (hostname, signal) => {
  const [a, aaaa] = await Promise.allSettled([
    Deno.resolveDns(hostname, "A", { signal }),
    Deno.resolveDns(hostname, "AAAA", { signal }),
  ]);
  const out: string[] = [];
  if (a.status === "fulfilled") out.push(...a.value);
  if (aaaa.status === "fulfilled") out.push(...aaaa.value);
  return out;
};

/** Strips the brackets WHATWG URL keeps around IPv6 literals. */
export function bareHostname(url: URL): string {
  const h = url.hostname;
  return h.startsWith("[") ? h.slice(1, -1) : h;
}

/** 127.0.0.0/8 or ::1 (or an IPv4-mapped loopback). */
export function isLoopback(ip: string): boolean {
  try {
    const a = ipaddr.process(ip.startsWith("[") ? ip.slice(1, -1) : ip);
    return a.range() === "loopback";
  } catch {
    return false;
  }
}

function isIpLiteral(host: string): boolean {
  return host.includes(":") || ipaddr.IPv4.isValidFourPartDecimal(host);
}

/**
 * Parses and vets a URL before any connection: scheme http(s) only (https only when required),
 * no userinfo (credentials in URLs leak into logs and confuse host parsing), and every address
 * the host resolves to must be public unless `allowPrivate`. A DNS failure refuses (fail closed).
 * A host whose addresses mix public and private is refused as a whole.
 */
export async function checkUrlTarget(
  input: string | URL,
  opts: TargetOptions,
): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    throw new TargetRefusedError("invalid_url", `Not a valid URL: ${String(input).slice(0, 200)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TargetRefusedError("bad_scheme", `Scheme ${url.protocol} is not allowed`, url.href);
  }
  if (opts.requireHttps && url.protocol !== "https:") {
    throw new TargetRefusedError("https_required", "Only https URLs are allowed", url.href);
  }
  if (url.username !== "" || url.password !== "") {
    throw new TargetRefusedError("userinfo", "URLs with credentials are not allowed", url.href);
  }
  const host = bareHostname(url);
  let addresses: string[];
  if (isIpLiteral(host)) {
    addresses = [host];
  } else if (opts.allowPrivate && host === "localhost" && !opts.resolver) {
    addresses = ["127.0.0.1"];
  } else {
    try {
      addresses = await (opts.resolver ?? denoResolver)(host, opts.signal);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) {
      throw new TargetRefusedError("dns_failure", `Host ${host} did not resolve`, url.href);
    }
  }
  if (!opts.allowPrivate) {
    const bad = addresses.find((a) =>
      !isPublicAddress(a) && !(opts.allowLoopback && isLoopback(a))
    );
    if (bad !== undefined) {
      throw new TargetRefusedError(
        "private_address",
        `Host ${host} resolves to a non-public address (${bad})`,
        url.href,
      );
    }
  }
  return { url, addresses };
}
