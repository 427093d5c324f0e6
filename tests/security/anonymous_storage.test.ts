/**
 * What any anonymous caller can make the service store, as a property: for any sequence of
 * anonymous requests (signups, OAuth client registrations, authorization pages, wrong operator
 * tokens, share-link guesses, MCP calls without a key) from addresses spread over a few network
 * blocks, every entry written either expires (read from the KV file's own `expiration_ms`) or
 * belongs to a signed-up sandbox account, and both are bounded per network block (IPv4 /24,
 * IPv6 /48) by the configured caps, however the addresses vary inside a block.
 *
 * A sandbox account is the one thing kept: it is a customer's account (bounded at
 * `SIGNUP_SANDBOXES_PER_BLOCK_PER_DAY` per block and day), not anonymous scratch state.
 * `FUZZ_RUNS` raises the number of sequences (default 6).
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import fc from "fast-check";
import { addressBlock } from "../../domain/identity/signup_limits.ts";
import { ADMIN_TOKEN, startTestApp } from "../helpers/app.ts";

const RUNS = Math.max(2, Math.ceil(Number(Deno.env.get("FUZZ_RUNS") ?? 250) / 40));
const PER_BLOCK = 3;
const ENV = {
  SERVICE_ROLE: "web",
  MAINTENANCE_INTERVAL_MS: "600000",
  SIGNUP_SANDBOXES_PER_BLOCK_PER_DAY: String(PER_BLOCK),
  SIGNUP_RATE_PER_IP_PER_HOUR: "1000",
  OAUTH_REGISTRATIONS_PER_BLOCK_PER_HOUR: String(PER_BLOCK),
};
/** The entries of one sandbox account that do not expire (a signup writes these five). */
const ACCOUNT_FAMILIES = new Set([
  "accounts",
  "accounts_by_email",
  "api_keys",
  "api_keys_by_account",
  "sandbox_usage",
]);
const ENTRIES_PER_ACCOUNT = ACCOUNT_FAMILIES.size;

/** Three blocks: two IPv4 /24s and one IPv6 /48 (addresses vary across its /64s). */
const address = fc.oneof(
  fc.integer({ min: 1, max: 254 }).map((n) => `198.51.100.${n}`),
  fc.integer({ min: 1, max: 254 }).map((n) => `203.0.113.${n}`),
  fc.tuple(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 1, max: 0xffff }))
    .map(([subnet, host]) => `2001:db8:7:${subnet.toString(16)}::${host.toString(16)}`),
);
const request = fc.record({
  kind: fc.constantFrom("signup", "register", "authorize", "admin", "share", "mcp"),
  ip: address,
});

interface Row {
  k: string;
  e: number | null;
}

/** The first element of a stored key: KV encodes a string as 0x02, its bytes, then 0x00. */
function family(hexKey: string): string {
  const bytes = Uint8Array.from(hexKey.match(/../g)!.map((h) => parseInt(h, 16)));
  if (bytes[0] !== 0x02) return `<${bytes[0]}>`;
  const end = bytes.indexOf(0x00, 1);
  return new TextDecoder().decode(bytes.subarray(1, end < 0 ? undefined : end));
}

Deno.test("anonymous storage: every entry expires or is a sandbox account, bounded per network block", async () => {
  let emails = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 40 }), async (requests) => {
      const path = await Deno.makeTempFile({ suffix: ".sqlite" });
      const app = await startTestApp({ kv: await Deno.openKv(path), env: ENV });
      const db = new DatabaseSync(path, { readOnly: true });
      const rows = () =>
        db.prepare("SELECT hex(k) AS k, expiration_ms AS e FROM kv").all() as unknown as Row[];
      try {
        const before = new Set(rows().map((r) => r.k));
        const made = new Map<string, { accounts: number; clients: number }>();
        const count = (ip: string) => {
          const block = addressBlock(ip);
          if (!made.has(block)) made.set(block, { accounts: 0, clients: 0 });
          return made.get(block)!;
        };
        let clientId: string | null = null;
        for (const { kind, ip } of requests) {
          const headers = { "x-forwarded-for": ip, "content-type": "application/json" };
          if (kind === "signup") {
            const res = await app.req("POST", "/v1/accounts", {
              body: { email: `anon${++emails}@example.com` },
              ip,
            });
            assert.ok([201, 429].includes(res.status), res.text);
            if (res.status === 201) count(ip).accounts++;
          } else if (kind === "register") {
            const res = await fetch(`${app.url}/oauth/register`, {
              method: "POST",
              headers,
              body: JSON.stringify({ redirect_uris: ["http://127.0.0.1/cb"] }),
            });
            const body = await res.json();
            assert.ok([201, 429].includes(res.status), JSON.stringify(body));
            if (res.status === 201) {
              count(ip).clients++;
              clientId = body.client_id;
            }
          } else if (kind === "authorize") {
            const u = new URL(`${app.url}/oauth/authorize`);
            u.searchParams.set("response_type", "code");
            u.searchParams.set("client_id", clientId ?? "mcp_client_unknown");
            u.searchParams.set("redirect_uri", "http://127.0.0.1/cb");
            u.searchParams.set("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
            u.searchParams.set("code_challenge_method", "S256");
            u.searchParams.set("resource", `${app.url}/mcp`);
            u.searchParams.set("state", "s");
            await (await fetch(u, { headers, redirect: "manual" })).body?.cancel();
          } else if (kind === "admin") {
            const res = await fetch(`${app.url}/admin/accounts/acct_x/live-keys`, {
              method: "POST",
              headers: { ...headers, authorization: `Bearer ${ADMIN_TOKEN}-wrong` },
            });
            await res.body?.cancel();
            assert.ok([401, 429].includes(res.status));
          } else if (kind === "share") {
            const res = await fetch(`${app.url}/reports/${"A".repeat(43)}`, { headers });
            await res.body?.cancel();
            assert.ok([404, 429].includes(res.status));
          } else {
            const res = await fetch(`${app.url}/mcp`, {
              method: "POST",
              headers: {
                ...headers,
                accept: "application/json, text/event-stream",
                "mcp-protocol-version": "2025-06-18",
              },
              body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
            });
            await res.body?.cancel();
          }
        }
        const fresh = rows().filter((r) => !before.has(r.k));
        const kept = fresh.filter((r) => r.e === null || r.e < 0);
        for (const r of kept) {
          assert.ok(ACCOUNT_FAMILIES.has(family(r.k)), `${family(r.k)}: kept without expiry`);
        }
        const accounts = [...made.values()].reduce((n, b) => n + b.accounts, 0);
        assert.equal(kept.length, accounts * ENTRIES_PER_ACCOUNT, "only signups are kept");
        for (const [block, m] of made) {
          assert.ok(m.accounts <= PER_BLOCK, `${block}: ${m.accounts} sandbox accounts`);
          assert.ok(m.clients <= PER_BLOCK, `${block}: ${m.clients} registered clients`);
        }
        // Whatever expires is bounded too: a few entries per request at most.
        assert.ok(fresh.length <= 8 * requests.length + 10, `${fresh.length} entries`);
      } finally {
        db.close();
        await app.close();
        await Deno.remove(path).catch(() => {});
      }
    }),
    { numRuns: RUNS },
  );
});
