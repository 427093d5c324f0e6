/**
 * Share links: a time-limited public URL for an audit report or an article, created, listed, resolved
 * and revoked. The public face of the capability; the persisted shapes are in `types.ts`.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/mod.ts";
 * declare const deps: Deps, token: string;
 * import { resolveShare } from "./mod.ts";
 * const share = await resolveShare(deps, "audit", token);
 * ```
 *
 * @module
 */
export {
  activeShareUrl,
  createShare,
  DEFAULT_SHARE_DAYS,
  DEFAULT_SHARE_PAGE,
  endAllShares,
  liveSharesOfAccount,
  liveShareView,
  MAX_LIVE_SHARES,
  MAX_SHARE_DAYS,
  MAX_SHARE_PAGE,
  resolveShare,
  revokeShare,
  type ShareKind,
  type ShareOwner,
  sharesOf,
  shareUrl,
  shareView,
} from "./links.ts";
