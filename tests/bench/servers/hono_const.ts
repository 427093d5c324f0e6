// Baseline: a Hono route answering constant JSON (Hono's own ceiling on this machine).
import { Hono } from "hono";
const app = new Hono();
app.get("/", (c) => c.json({ ok: true, service: "baseline" }));
Deno.serve(
  {
    port: Number(Deno.env.get("PORT")),
    hostname: "127.0.0.1",
    onListen: () => console.log("ready"),
  },
  app.fetch,
);
