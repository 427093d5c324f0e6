/**
 * The audit record (the truth of an audit job, design.md) and the reads of it: its types, and
 * `getAudit`, which answers 404 for an audit the caller may not see.
 *
 * @module
 */
import type { AuditChanges, AuditRecord, AuditStatus, AuditTrigger, RenderStats } from "./types.ts";
import { ApiError, type Deps, keys, read } from "../platform/mod.ts";
import { projectVisibleTo } from "../projects/mod.ts";
import type { KeyMode } from "../identity/types.ts";

export type { AuditChanges, AuditStatus, AuditTrigger, RenderStats };

export type { AuditRecord };

/** The audit's trigger; records written before the field existed were all started by the API. */
export function triggerOf(audit: Pick<AuditRecord, "trigger">): AuditTrigger {
  return audit.trigger ?? "api";
}

/** An audit of the account, or 404. */
export async function getAudit(
  deps: Deps,
  accountId: string,
  auditId: string,
  mode: KeyMode,
): Promise<AuditRecord> {
  const audit = (await read(deps.kv, keys.audit(accountId, auditId))).value;
  if (!audit || !(await projectVisibleTo(deps, accountId, audit.projectId, mode))) {
    throw new ApiError("not_found", `No audit '${auditId}' on this account`);
  }
  return audit;
}
