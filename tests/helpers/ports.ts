/**
 * A loopback port for a server another process (or a later call) will bind: the one way the tests
 * and benchmarks pick one.
 *
 * Not the kernel's port 0: that port comes from the ephemeral range, from which the kernel also
 * hands out every other `port: 0` listener (the fixture sites, the mock Stripe) and the client end
 * of every connection. Released, it could go to one of those before the child binds it; parallel
 * test files then saw a child that could not listen ("Address already in use") and a fixture site
 * polled for `GET /v1/plans` by another file's child. So the port is drawn below that range
 * (Linux's default starts at 32768, macOS's and Windows' at 49152), checked free by binding it,
 * and never handed out twice by one process.
 *
 * @module
 */

/** Ports drawn from [LOW, HIGH): below every common ephemeral range, above the well-known ones. */
const LOW = 20_000;
const HIGH = 32_768;
const handedOut = new Set<number>();

/**
 * A free loopback port (bound and released), outside the kernel's ephemeral range.
 *
 * @example
 * ```ts
 * import { freePort } from "./ports.ts";
 * const port = freePort();
 * Deno.serve({ hostname: "127.0.0.1", port }, () => new Response("ok"));
 * ```
 */
export function freePort(): number {
  for (let tries = 0; tries < 1_000; tries++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (handedOut.has(port)) continue;
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
    } catch {
      continue; // in use
    }
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free loopback port in [${LOW}, ${HIGH})`);
}
