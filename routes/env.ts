import type { Principal } from "../domain/identity/mod.ts";

export type { Services } from "../app/services.ts";

/** Hono's context variables. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** Set by `identify` when the bearer key resolved; `requireKey` makes it mandatory. */
    principal: Principal | null;
    /** Why the bearer key did not resolve, thrown by `requireKey`. */
    authError: Error | null;
  };
}
