/**
 * The audit options as MCP tool arguments (the `audits` tool's `start` and the `schedule` tool's
 * `set`): loosely typed here, as the tools' other arguments are, and validated by the operation's
 * own schema (app/operations/audits.ts `AuditOptionsFields`), so a bad option is the same
 * `invalid_request` naming the field as on `/v1`.
 */
import { z } from "zod";
import { MaxRpsSchema } from "../../../app/operations/audit_access_schema.ts";

export const AuditOptionArgs = {
  include: z.array(z.string()).optional()
    .describe("start/set: only paths matching these globs (max 20)"),
  exclude: z.array(z.string()).optional()
    .describe("start/set: skip paths matching these globs"),
  max_depth: z.number().optional().describe("start/set: max clicks from the start URL"),
  urls: z.array(z.string()).optional()
    .describe("start/set: audit exactly these URLs (max 500)"),
  sitemap_only: z.boolean().optional()
    .describe("start/set: start page and sitemap URLs only"),
  user_agent: z.string().optional().describe(
    "start/set: serpwright (default), googlebot_smartphone, googlebot_desktop or bingbot",
  ),
  // Loose here (its JSON Schema was 1 KB); the operation's own schema validates it, as on /v1.
  auth: z.looseObject({}).optional().describe(
    "start/set: staging access: {type:basic,user,password}, {type:headers,headers:{…}} or " +
      "{type:cookie,cookie}",
  ),
  max_rps: MaxRpsSchema.optional().describe("start/set: requests/s per host, 0.1-100"),
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
