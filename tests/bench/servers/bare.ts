// Baseline: bare Deno.serve answering a constant JSON body.
const body = JSON.stringify({ ok: true, service: "baseline" });
Deno.serve(
  {
    port: Number(Deno.env.get("PORT")),
    hostname: "127.0.0.1",
    onListen: () => console.log("ready"),
  },
  () => new Response(body, { headers: { "content-type": "application/json" } }),
);
