/**
 * Abuse limits of the public, CAPTCHA-free signup that sit beside the account's commit: how many
 * sandbox accounts one address block may open per day, and the operator's disposable-address
 * option. The signup use case (domain/identity/public_signup.ts) applies them after the per-IP and global
 * signup rates, for REST and MCP alike.
 *
 * @module
 */
import ipaddr from "ipaddr.js";
import { ApiError } from "../platform/mod.ts";

export const DAY_MS = 86_400_000;

/**
 * The block an address belongs to for the per-day sandbox cap: IPv4 /24, IPv6 /48 (a typical
 * single site's allocation), IPv4-mapped IPv6 as its IPv4. Anything unparseable is its own block.
 * A client that rotates addresses inside one /24 or /48 still spends one budget.
 */
export function addressBlock(ip: string): string {
  try {
    let addr = ipaddr.parse(ip);
    if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
      addr = (addr as ipaddr.IPv6).toIPv4Address();
    }
    if (addr.kind() === "ipv4") {
      const o = (addr as ipaddr.IPv4).octets;
      return `${o[0]}.${o[1]}.${o[2]}.0/24`;
    }
    const parts = (addr as ipaddr.IPv6).parts;
    return `${parts.slice(0, 3).map((p) => p.toString(16)).join(":")}::/48`;
  } catch {
    return ip;
  }
}

/**
 * Well-known disposable-address domains (refused when `SIGNUP_DISPOSABLE_EMAILS=refuse`); the
 * operator extends the list with `SIGNUP_DISPOSABLE_DOMAINS`. Subdomains count too.
 */
export const DISPOSABLE_DOMAINS: readonly string[] = [
  "10minutemail.com",
  "20minutemail.com",
  "33mail.com",
  "dispostable.com",
  "dropmail.me",
  "emailondeck.com",
  "fakeinbox.com",
  "getairmail.com",
  "getnada.com",
  "guerrillamail.com",
  "guerrillamail.net",
  "guerrillamail.org",
  "guerrillamailblock.com",
  "mailcatch.com",
  "maildrop.cc",
  "mailinator.com",
  "mailnesia.com",
  "mintemail.com",
  "mohmal.com",
  "mytemp.email",
  "sharklasers.com",
  "spamgourmet.com",
  "temp-mail.org",
  "tempail.com",
  "tempmail.com",
  "tempmail.dev",
  "tempr.email",
  "throwawaymail.com",
  "trashmail.com",
  "trashmail.de",
  "yopmail.com",
  "yopmail.fr",
];

/** True when the email's domain, or a parent of it, is on the built-in or operator list. */
export function isDisposableEmail(email: string, extra: readonly string[] = []): boolean {
  const domain = email.slice(email.lastIndexOf("@") + 1).toLowerCase();
  const labels = domain.split(".");
  for (let i = 0; i < labels.length - 1; i++) {
    const candidate = labels.slice(i).join(".");
    if (DISPOSABLE_DOMAINS.includes(candidate) || extra.includes(candidate)) return true;
  }
  return false;
}

/** 400 for a refused disposable address (naming the field, as validation errors do). */
export function disposableRefused(): ApiError {
  return new ApiError(
    "invalid_request",
    "email: addresses at disposable-email domains are not accepted on this server",
  );
}

/** 429 when an address block has opened its sandbox accounts for the day. */
export function blockExhausted(limit: number, retryAfterS: number): ApiError {
  return new ApiError(
    "rate_limited",
    `Too many sandbox accounts from this network today (limit ${limit} per day); ` +
      `retry in ${retryAfterS} s`,
    undefined,
    { "Retry-After": String(retryAfterS) },
  );
}
