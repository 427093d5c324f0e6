/**
 * The request and response fragments of an audit's access to the site: staging credentials
 * (`auth`) and the per-host rate cap (`max_rps`), for the audit start body and schedules, and what
 * a completed audit says about politeness. One module so every body that takes them validates them
 * the same way (domain/audit_engine/site_auth.ts holds the rules; domain/audit_engine/crawl/politeness.ts the
 * pace).
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import {
  MAX_AUTH_HEADERS,
  MAX_CRAWL_DELAY_S,
  MAX_HEADER_NAME,
  MAX_SECRET_LENGTH,
  MAX_USER_LENGTH,
  type SiteAuth,
  siteAuthProblem,
} from "../../domain/audit_engine/mod.ts";

/** The lowest and highest `max_rps` an audit may ask for. */
export const MIN_AUDIT_RPS = 0.1;
export const MAX_AUDIT_RPS = 100;

const Basic = z.object({
  type: z.literal("basic"),
  user: z.string().min(1).max(MAX_USER_LENGTH),
  password: z.string().max(MAX_SECRET_LENGTH),
}).strict();

const HeaderAuth = z.object({
  type: z.literal("headers"),
  headers: z.record(z.string().min(1).max(MAX_HEADER_NAME), z.string().max(MAX_SECRET_LENGTH))
    .openapi({
      description: `1 to ${MAX_AUTH_HEADERS} named headers (token-character names; not ` +
        "hop-by-hop, Host, Content-Length, User-Agent, Accept, Accept-Encoding, Proxy-*, Sec-*; " +
        "each name once, case-insensitively)",
      example: { "X-Preview-Token": "s3cret" },
    }),
}).strict();

const Cookie = z.object({
  type: z.literal("cookie"),
  cookie: z.string().min(1).max(MAX_SECRET_LENGTH).openapi({ example: "session=abc123" }),
}).strict();

/**
 * `auth`: staging credentials, sent only to the project's own origin, encrypted at rest, never
 * returned, deleted when the audit ends.
 */
export const SiteAuthSchema = z.discriminatedUnion("type", [Basic, HeaderAuth, Cookie])
  .superRefine((auth, ctx) => {
    const p = siteAuthProblem(auth as SiteAuth);
    if (p) ctx.addIssue({ code: "custom", path: p.path, message: p.message });
  })
  .openapi("SiteAuth", {
    description: "Staging access (additive): HTTP Basic (`user`, `password`), a few named " +
      "`headers`, or a `cookie` string. Sent only to the project URL's origin (scheme, host and " +
      "port), never across a redirect to another origin; encrypted at rest under the operator's " +
      "key (503 site_auth_not_configured without one), never returned (shown masked) or logged, " +
      "and deleted when the audit ends. Raw audits only (400 with render)",
  });

/** `max_rps`: requests per second per host at most; `CRAWL_MAX_RPS` still caps it. */
export const MaxRpsSchema = z.number().min(MIN_AUDIT_RPS).max(MAX_AUDIT_RPS).openapi({
  description: `Requests per second per host at most, ${MIN_AUDIT_RPS} to ${MAX_AUDIT_RPS} ` +
    "(additive). It may only lower the server's own cap (CRAWL_MAX_RPS), when one is set",
  example: 2,
});

/** The credentials as shown: the kind, a Basic user name, header names; every secret `***`. */
export const MaskedSiteAuthSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("basic"), user: z.string(), password: z.literal("***") }),
  z.object({ type: z.literal("headers"), headers: z.record(z.string(), z.literal("***")) }),
  z.object({ type: z.literal("cookie"), cookie: z.literal("***") }),
]).openapi("SiteAuthMasked");

/** A completed audit's `politeness`: what slowed the crawl down. */
export const PolitenessSchema = z.object({
  slowed: z.boolean().openapi({
    description: "The site slowed the crawl: a robots.txt Crawl-delay, or 429/503 answers",
  }),
  max_rps: z.number().nullable().openapi({
    description: "The per-host rate cap the crawl ran under (the audit's max_rps within " +
      "CRAWL_MAX_RPS); null: none",
  }),
  crawl_delay_seconds: z.number().nullable().openapi({
    description: `robots.txt Crawl-delay honoured (at most ${MAX_CRAWL_DELAY_S} s); null: none`,
  }),
  crawl_delay_requested_seconds: z.number().nullable().openapi({
    description: "The Crawl-delay the site asked for when it was over the cap (clamped); null " +
      "otherwise",
  }),
  throttled: z.number().int().openapi({
    description: "429 answers, and 503 answers with Retry-After, that slowed the crawl",
  }),
  retries: z.number().int().openapi({ description: "Pages fetched again after such an answer" }),
  gave_up: z.number().int().openapi({
    description: "Pages recorded with their 429/503 once their retries were spent",
  }),
  paused: z.number().int().optional().openapi({
    description: "Times the whole crawl paused because too many recent responses were errors " +
      "(5xx, 429, failed fetches; the operator's `CRAWL_ERROR_*`). A site still failing after " +
      "its pauses ends the crawl: `error_rate` in `limits_hit`",
  }),
  final_rps: z.number().nullable().openapi({
    description: "The slowest per-host rate the crawl ended at (halved at each throttle); null: " +
      "no cap was ever applied",
  }),
}).openapi("AuditPoliteness");
