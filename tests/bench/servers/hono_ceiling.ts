// Baseline: Hono's own ceiling on the authenticated read path — a Hono route answering constant JSON
// after a synchronous SHA-256 of the bearer and with the three rate-limit headers.
import { Hono } from "hono";
import { createHash } from "node:crypto";
const app = new Hono();
app.get("/", (c) => {
  createHash("sha256").update(c.req.header("authorization") ?? "").digest("hex");
  c.header("X-RateLimit-Limit", "600");
  c.header("X-RateLimit-Remaining", "599");
  c.header("X-RateLimit-Reset", "1795399200");
  return c.json({ ok: true, service: "baseline" });
});
Deno.serve(
  {
    port: Number(Deno.env.get("PORT")),
    hostname: "127.0.0.1",
    onListen: () => console.log("ready"),
  },
  app.fetch,
);
