import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { publicSignup } from "../domain/public_signup.ts";
import type { AppEnv, Services } from "./env.ts";
import { idempotency } from "./middleware/idempotency.ts";
import { requireKey } from "./middleware/auth.ts";
import { setHeaders, signupRates } from "./middleware/rate_limit.ts";
import { clientIp } from "./middleware/request_id.ts";
import { AUTH_ERRORS, bearerSecurity, IdempotencyHeader, responses } from "./openapi_helpers.ts";
import { accountView, sandboxLimits } from "../app/views.ts";

const SandboxLimits = z.object({
  audits: z.number().int(),
  articles: z.number().int(),
  expires_days: z.number().int(),
}).openapi("SandboxLimits");

export const SignupBody = z.object({
  email: z.string().trim().max(320).pipe(z.email()).openapi({ example: "agent@example.com" }),
  company_name: z.string().min(1).max(200).optional().openapi({ example: "Acme" }),
  origin: z.enum(["agent", "human"]).optional().openapi({ example: "agent" }),
}).strict().openapi("SignupRequest");

export const SignupResponse = z.object({
  account_id: z.string(),
  api_key: z.string().openapi({ description: "Raw sandbox key, shown once" }),
  mode: z.literal("sandbox"),
  sandbox_limits: SandboxLimits,
  upgrade_url: z.string(),
  docs: z.string(),
}).openapi("SignupResponse");

export const Account = z.object({
  account_id: z.string(),
  email: z.string(),
  email_verified: z.boolean(),
  mode: z.enum(["sandbox", "live"]),
  plan: z.null(),
  sandbox_usage: z.object({ audits: z.number().int(), articles: z.number().int() }).optional(),
  sandbox_limits: SandboxLimits.optional(),
  created_at: z.string(),
  projects_count: z.number().int(),
}).openapi("Account");

export function accountRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const { deps } = s;

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/accounts",
      tags: ["Accounts"],
      summary: "Sign up (public, no CAPTCHA); returns a sandbox key at once",
      middleware: [idempotency(s)] as const,
      request: {
        headers: IdempotencyHeader,
        body: { content: { "application/json": { schema: SignupBody } }, required: true },
      },
      responses: responses(
        {
          201: {
            description: "Account created; the raw key is shown once",
            schema: SignupResponse,
          },
        },
        ["account_exists", "rate_limited", "idempotency_conflict", "payload_too_large"],
      ),
    }),
    async (c) => {
      const body = c.req.valid("json");
      // Every signup limit, in the one order the MCP signup tool shares; a replay never gets here.
      const { account, raw } = await publicSignup(deps, signupRates(s), {
        ip: clientIp(c, deps.config),
        email: body.email,
        companyName: body.company_name ?? null,
        origin: body.origin ?? "agent",
      }, (decision) => setHeaders(c, decision));
      const base = deps.config.publicBaseUrl;
      return c.json({
        account_id: account.id,
        api_key: raw,
        mode: "sandbox" as const,
        sandbox_limits: sandboxLimits(),
        upgrade_url: `${base}/pricing`,
        docs: `${base}/docs/agents`,
      }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/account",
      tags: ["Accounts"],
      summary: "The calling key's account",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      responses: responses({ 200: { description: "The account", schema: Account } }, AUTH_ERRORS),
    }),
    (c) => c.json(accountView(c.get("principal")!), 200),
  );
}
