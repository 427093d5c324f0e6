/**
 * Every operation of the application layer, in the order the API reference lists them. Both
 * adapters are built from it, and the parity test walks it.
 *
 * @module
 */
import { ACCOUNT_OPERATIONS } from "./accounts.ts";
import { API_KEY_OPERATIONS } from "./api_keys.ts";
import { ARTICLE_OPERATIONS } from "./articles.ts";
import { AUDIT_OPERATIONS } from "./audits.ts";
import { BILLING_OPERATIONS } from "./billing.ts";
import { CONNECTED_APP_OPERATIONS } from "./connected_apps.ts";
import { FIX_OPERATIONS } from "./fixes.ts";
import { PROJECT_OPERATIONS } from "./projects.ts";
import { RECHECK_OPERATIONS } from "./rechecks.ts";
import { REPORT_OPERATIONS } from "./reports.ts";
import { SCHEDULE_OPERATIONS } from "./schedules.ts";
import {
  ACCOUNT_SHARE_OPERATIONS,
  ARTICLE_SHARE_OPERATIONS,
  AUDIT_SHARE_OPERATIONS,
} from "./shares.ts";
import { UPGRADE_OPERATIONS } from "./upgrades.ts";
import { WEBHOOK_OPERATIONS } from "./webhooks.ts";

export const OPERATIONS = [
  ...ACCOUNT_OPERATIONS,
  ...API_KEY_OPERATIONS,
  // Additive: the OAuth grants (MCP hosts) the account's keys approved.
  ...CONNECTED_APP_OPERATIONS,
  ...PROJECT_OPERATIONS,
  // 9–10 and the audit's findings listings (additive), 11–12.
  ...AUDIT_OPERATIONS,
  // Additive: fixes an agent can apply, and the redirect map.
  ...FIX_OPERATIONS,
  // Additive: re-checking one check of a completed audit.
  ...RECHECK_OPERATIONS,
  // Additive: the HTML report and share links of an audit.
  ...REPORT_OPERATIONS,
  ...AUDIT_SHARE_OPERATIONS,
  ...ARTICLE_OPERATIONS,
  // Additive: share links of an article's preview.
  ...ARTICLE_SHARE_OPERATIONS,
  // Additive: every share link of the account, listed and ended at once.
  ...ACCOUNT_SHARE_OPERATIONS,
  // Additive: a project's audit schedule.
  ...SCHEDULE_OPERATIONS,
  ...BILLING_OPERATIONS,
  // Additive: upgrades an agent starts and a human finishes.
  ...UPGRADE_OPERATIONS,
  ...WEBHOOK_OPERATIONS,
];
