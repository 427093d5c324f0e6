/**
 * Identity: accounts and signup, API keys, who is calling (auth), and OAuth 2.1 for MCP hosts
 * (`oauth/`). The public face of the capability; the OAuth token endpoint (`oauth/tokens.ts`) is
 * imported directly by its one caller. The persisted shapes are in `types.ts` and `oauth/types.ts`.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/mod.ts";
 * declare const deps: Deps, accountId: string;
 * import { getAccount } from "./mod.ts";
 * const account = await getAccount(deps, accountId);
 * ```
 *
 * @module
 */
export { getAccount, SANDBOX_LIMITS } from "./accounts.ts";
export {
  buildKey,
  createKey,
  KEY_PREFIX,
  listKeys,
  MAX_ACTIVE_KEYS,
  revokeKey,
  rotateKey,
  writeKey,
} from "./api_keys.ts";
export {
  ADMIN_AUTH_FAILURES_PER_WINDOW,
  ADMIN_AUTH_WINDOW_MS,
  canSee,
  expiredSandboxPrincipal,
  KeyResolver,
  KeyUsageTracker,
  type Principal,
  revocationShard,
  signalAuthChange,
} from "./auth.ts";
export { hashKey } from "./key_hash.ts";
export {
  approve,
  type AuthorizeQuery,
  begin,
  check,
  deny,
  type Pending,
  redirectWith,
  resume,
  signIn,
  wrongKey,
} from "./oauth/authorization.ts";
export {
  CLIENT_DOC_FETCHES_PER_HOST,
  isLoopbackRedirect,
  registerClient,
  registrationResponse,
} from "./oauth/clients.ts";
export { OAuthError } from "./oauth/errors.ts";
export { activeGrantCount, grantCapMessage, listGrants, revokeGrant } from "./oauth/grants.ts";
export {
  authorizationServerMetadata,
  MCP_RESOURCE_PATH,
  OAUTH_PATHS,
  OAUTH_SCOPE,
  protectedResourceMetadata,
  resourceMetadataUrl,
} from "./oauth/metadata.ts";
export { TokenResolver } from "./oauth/resolver.ts";
export { isAccessToken } from "./oauth/secrets.ts";
export { publicSignup } from "./public_signup.ts";
export { addressBlock } from "./signup_limits.ts";
