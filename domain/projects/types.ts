/**
 * Persisted shapes of projects: the project record, its latest audit and sandbox usage.
 *
 * A leaf: it imports only other capabilities' `types.ts`, so the key table (domain/platform/store.ts)
 * depends on no module with code.
 *
 * @module
 */

export interface SandboxUsage {
  audits: number;
  articles: number;
}

export type ProjectAccess = "sandbox" | "pending_payment" | "active";

export interface LatestAudit {
  audit_id: string;
  status: string;
  completed_at: string | null;
  score: number | null;
  summary: unknown;
}

export interface ProjectRecord {
  id: string;
  accountId: string;
  url: string;
  name: string;
  status: "setup" | "running";
  language: string;
  country: string;
  sandbox: boolean;
  createdAt: number;
  counts: { keywords: number; articles: number; audits: number };
  latestAudit: LatestAudit | null;
}
