/**
 * The audit options as MCP tool arguments (the `audits` tool's `start` and the `schedule` tool's
 * `set`): loosely typed here, as the tools' other arguments are, and validated by the operation's
 * own schema (app/operations/audits.ts `AuditOptionsFields`), so a bad option is the same
 * `invalid_request` naming the field as on `/v1`.
 */
import { z } from "zod";
import { MaxRpsSchema, SiteAuthSchema } from "../../../app/operations/audit_access_schema.ts";

export const AuditOptionArgs = {
  include: z.array(z.string()).optional().describe(
    "start/set: crawl only URLs whose path matches one of these globs (e.g. /blog/**; * within " +
      "a path segment, ** across segments; at most 20 of 200 characters); the start page is " +
      "always audited",
  ),
  exclude: z.array(z.string()).optional().describe(
    "start/set: never crawl URLs whose path matches one of these globs (wins over include; " +
      "links to them are not broken)",
  ),
  max_depth: z.number().optional().describe(
    "start/set: crawl only URLs at most this many clicks from the start URL (0: start page only)",
  ),
  urls: z.array(z.string()).optional().describe(
    "start/set: list mode, audit exactly these URLs of the project's own site (up to 500 and " +
      "the page budget); no link followed; not with include, exclude, max_depth or sitemap_only",
  ),
  sitemap_only: z.boolean().optional().describe(
    "start/set: crawl only the start page and the URLs the sitemaps list",
  ),
  user_agent: z.string().optional().describe(
    "start/set: serpwright (default), googlebot_smartphone, googlebot_desktop or bingbot: the " +
      "crawler names itself plus that crawler's token and obeys that token's robots.txt rules",
  ),
  auth: SiteAuthSchema.optional().describe(
    "start/set: staging access, as POST /v1/projects/{projectId}/audits auth: basic (user, " +
      "password), headers (a few named headers) or cookie; sent only to the project's own " +
      "origin, encrypted at rest, shown masked, deleted when the audit ends. Raw audits only",
  ),
  max_rps: MaxRpsSchema.optional().describe(
    "start/set: requests per second per host at most (0.1-100), within the server's own cap",
  ),
};

const Args = z.object(AuditOptionArgs);

/** The options as a tool's arguments carry them. */
export type AuditOptionArgsOut = z.output<typeof Args>;

/** The options of a tool call as the operation's body spells them. */
export function auditOptionsBody(a: AuditOptionArgsOut) {
  return {
    include: a.include,
    exclude: a.exclude,
    max_depth: a.max_depth,
    urls: a.urls,
    sitemap_only: a.sitemap_only,
    user_agent: a.user_agent,
    auth: a.auth,
    max_rps: a.max_rps,
  };
}
