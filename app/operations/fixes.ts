/**
 * Fixes an agent can apply (additive): a completed audit's proposed changes per URL, and its
 * redirect map for broken internal URLs as JSON, CSV or the files nginx and Apache read. Built
 * by domain/audits/fixes.ts from the audit's stored findings; the audit itself never changes.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import {
  exportAuditFixes,
  exportAuditRedirects,
  FIX_CHECKS,
  listAuditFixes,
  listAuditRedirects,
} from "../../domain/audits/mod.ts";
import { bodyResult, defineOperation } from "../operation.ts";
import { AuditIdParam, NextCursor, PageQuery } from "./audits.ts";

const Confidence = z.enum(["high", "medium", "low"]);

const Fix = z.object({
  url: z.string().openapi({
    description: "Where the change is made: the page; for a redirect, the broken URL; for a " +
      "sitemap change, the entry",
  }),
  check: z.string().openapi({ example: "broken_internal_links" }),
  kind: z.enum([
    "title",
    "meta_description",
    "link",
    "redirect",
    "canonical",
    "hreflang",
    "sitemap_add",
    "sitemap_drop",
  ]),
  target: z.string().nullable().openapi({
    description: "What on the page it is about: the link target, the canonical or the " +
      "alternate; the entry for sitemap changes; null otherwise",
  }),
  current: z.string().nullable().openapi({ description: "The value now (null: none)" }),
  proposed: z.string().nullable().openapi({
    description: "The value to write; null: remove it (a link, an alternate, a sitemap entry) " +
      "or nothing could be proposed (see why)",
  }),
  why: z.string(),
  confidence: Confidence,
  source: z.enum(["audit", "page_text", "similarity"]).openapi({
    description: "audit: from facts the audit recorded (redirect ends, statuses); page_text: " +
      "built from the page's own h1, title and URL words, not by a model (review it); " +
      "similarity: the live URL most likely meant, by path and content similarity",
  }),
}).openapi("AuditFix");

export const FixList = z.object({
  audit_id: z.string(),
  data: z.array(Fix),
  next_cursor: NextCursor,
}).openapi("AuditFixList");

const ServerFile = z.object({
  written: z.boolean(),
  reason: z.string().nullable().openapi({
    description: "Why it is left out of the file: the URL cannot be written safely (quotes, " +
      "$, braces, whitespace, encoded control characters, a query for RedirectMatch) or " +
      "there is no destination",
  }),
});

const Redirect = z.object({
  from: z.string().openapi({ description: "A broken internal URL (links found to it)" }),
  to: z.string().nullable().openapi({
    description: "The live URL it most likely meant; null when none is similar enough",
  }),
  score: z.number().openapi({ description: "Similarity 0-1 (path and content)" }),
  confidence: Confidence.nullable(),
  links: z.number().int().openapi({ description: "Links to it in the stored evidence" }),
  nginx: ServerFile,
  apache: ServerFile,
}).openapi("AuditRedirect");

export const RedirectList = z.object({
  audit_id: z.string(),
  data: z.array(Redirect),
  next_cursor: NextCursor,
}).openapi("AuditRedirectList");

const FIX_FORMATS = {
  csv: {
    contentType: "text/csv; charset=utf-8; header=present",
    description: "every fix (not one page) as RFC 4180 CSV with a header row, streamed; text " +
      "cells that start with = + - @ or a tab are prefixed with '",
  },
  ndjson: {
    contentType: "application/x-ndjson",
    description: "every fix as newline-delimited JSON, one `data` item per line, streamed",
  },
};

const REDIRECT_FORMATS = {
  nginx: {
    contentType: "text/plain; charset=utf-8",
    description: "an nginx `map $request_uri $serpwright_redirect { ... }` block; every source " +
      "and destination validated and quoted, a URL that cannot be written safely left out " +
      "(the JSON says why)",
  },
  apache: {
    contentType: "text/plain; charset=utf-8",
    description: "Apache `RedirectMatch 301` lines, the source path regex-escaped byte by " +
      "byte; a URL that cannot be written safely left out (the JSON says why)",
  },
  csv: {
    contentType: "text/csv; charset=utf-8; header=present",
    description: "from, to, score, confidence, links and each server file's verdict; " +
      "formula-safe cells",
  },
};

export const listFixesOp = defineOperation({
  id: "audits.fixes",
  method: "get",
  path: "/v1/audits/{auditId}/fixes",
  tags: ["Audits"],
  summary: "Fixes an agent can apply: proposed changes per URL of a completed audit, each with " +
    "the check it fixes, the current and proposed value, why, and a confidence",
  description: "Titles and meta descriptions for pages missing or sharing one (built from the " +
    "page's own h1, title and URL words: source page_text), the final URL for links into " +
    "redirects, the live URL a broken link most likely meant, canonical and hreflang targets " +
    "that should name the final URL, sitemap entries to add or drop, then the redirect map " +
    "(kind redirect; also GET /v1/audits/{auditId}/fixes/redirects). `check` filters to one " +
    `check (${FIX_CHECKS.join(", ")}). Re-check a check after applying its fixes.`,
  access: "key",
  tokens: "allow",
  params: AuditIdParam,
  query: z.object({
    check: z.string().min(1).max(100).optional().openapi({
      description: "Only the fixes of this check",
      example: "broken_internal_links",
    }),
    ...PageQuery,
    format: z.enum(["json", "csv", "ndjson"]).optional().openapi({
      description: "json (default): a page. csv or ndjson: every fix, as a download (also " +
        "chosen by `Accept`; `format` wins)",
    }),
  }),
  status: 200,
  output: FixList,
  outputDescription: "A page of the fixes",
  formats: FIX_FORMATS,
  errors: ["not_found", "invalid_state"],
  async run({ params, query }, { services, actor }) {
    if (query.format === "csv" || query.format === "ndjson") {
      const file = await exportAuditFixes(
        services.deps,
        actor,
        params.auditId,
        { check: query.check },
        query.format,
      );
      return bodyResult(FIX_FORMATS[query.format].contentType, file.chunks, file.filename);
    }
    return await listAuditFixes(services.deps, actor, params.auditId, query);
  },
});

export const listRedirectsOp = defineOperation({
  id: "audits.redirects",
  method: "get",
  path: "/v1/audits/{auditId}/fixes/redirects",
  tags: ["Audits"],
  summary: "The redirect map of a completed audit: each broken internal URL and the live URL " +
    "it most likely meant, as JSON or as nginx, Apache or CSV files",
  access: "key",
  tokens: "allow",
  params: AuditIdParam,
  query: z.object({
    ...PageQuery,
    format: z.enum(["json", "nginx", "apache", "csv"]).optional().openapi({
      description: "json (default): a page, each entry saying whether each server file holds " +
        "it and why not. nginx, apache, csv: the whole map as a download",
    }),
  }),
  status: 200,
  output: RedirectList,
  outputDescription: "A page of the redirect map",
  formats: REDIRECT_FORMATS,
  errors: ["not_found", "invalid_state"],
  async run({ params, query }, { services, actor }) {
    const format = query.format;
    if (format === "nginx" || format === "apache" || format === "csv") {
      const file = await exportAuditRedirects(services.deps, actor, params.auditId, format);
      return bodyResult(REDIRECT_FORMATS[format].contentType, file.chunks, file.filename);
    }
    return await listAuditRedirects(services.deps, actor, params.auditId, query);
  },
});

/** The fix operations, in the order the API reference lists them. */
export const FIX_OPERATIONS = [listFixesOp, listRedirectsOp];
