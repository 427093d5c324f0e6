import assert from "node:assert/strict";
import {
  checkUrlTarget,
  isPublicAddress,
  type Resolver,
  TargetRefusedError,
} from "../../domain/net/address_guard.ts";
import { FetchFailedError, safeFetch } from "../../domain/net/safe_fetch.ts";
import { serveSite, TEST_CA } from "../helpers/sites.ts";

const publicResolver: Resolver = () => Promise.resolve(["93.184.216.34"]);

async function refused(url: string, reason: string, resolver: Resolver = publicResolver) {
  await assert.rejects(
    checkUrlTarget(url, { allowPrivate: false, resolver }),
    (e: unknown) => e instanceof TargetRefusedError && e.reason === reason,
    url,
  );
}

Deno.test("guard refuses every private, reserved and special range and form", async () => {
  const urls = [
    "http://127.0.0.1/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[fc00::1]/",
    "http://[fd00:ec2::254]/",
    "http://[fe80::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:10.0.0.1]/",
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://0x7f000001/",
    "http://0x7f.1/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
    "http://198.18.0.1/",
    "http://[64:ff9b::7f00:1]/",
    "http://[::]/",
  ];
  for (const u of urls) await refused(u, "private_address");
});

Deno.test("guard refuses a DNS name resolving to a private address (any of them)", async () => {
  await refused("http://internal.example/", "private_address", () => Promise.resolve(["10.0.0.5"]));
  await refused(
    "http://mixed.example/",
    "private_address",
    () => Promise.resolve(["93.184.216.34", "::1"]),
  );
  await refused("http://nowhere.example/", "dns_failure", () => Promise.resolve([]));
  await refused("http://broken.example/", "dns_failure", () => Promise.reject(new Error("x")));
});

Deno.test("guard refuses bad schemes, credentials, and http when https is required", async () => {
  await refused("ftp://example.com/", "bad_scheme");
  await refused("file:///etc/passwd", "bad_scheme");
  await refused("http://user:pw@example.com/", "userinfo");
  await refused("not a url", "invalid_url");
  await assert.rejects(
    checkUrlTarget("http://example.com/", {
      allowPrivate: false,
      requireHttps: true,
      resolver: publicResolver,
    }),
    (e: unknown) => e instanceof TargetRefusedError && e.reason === "https_required",
  );
});

Deno.test("guard accepts public addresses and lifts the check with allowPrivate", async () => {
  const ok = await checkUrlTarget("https://example.com/x", {
    allowPrivate: false,
    resolver: publicResolver,
  });
  assert.deepEqual(ok.addresses, ["93.184.216.34"]);
  assert.ok(isPublicAddress("8.8.8.8"));
  assert.ok(isPublicAddress("2606:4700:4700::1111"));
  assert.ok(isPublicAddress("::ffff:8.8.8.8"));
  assert.ok(!isPublicAddress("::7f00:1"), "IPv4-compatible form is outside 2000::/3");
  assert.ok(!isPublicAddress("garbage"));
  const dev = await checkUrlTarget("http://127.0.0.1:8080/", { allowPrivate: true });
  assert.deepEqual(dev.addresses, ["127.0.0.1"]);
});

Deno.test("safeFetch connects to the checked address, keeping Host and SNI as the name", async () => {
  const site = serveSite({
    "/": { handler: (req) => new Response(`host=${req.headers.get("host")}`) },
  }, { tls: true });
  try {
    const port = new URL(site.origin).port;
    // "localhost" is in the certificate; the resolver pins it to 127.0.0.1, no real DNS involved.
    let calls = 0;
    const res = await safeFetch(`https://localhost:${port}/`, {
      allowPrivate: true,
      ca: TEST_CA,
      resolver: () => {
        calls++;
        return Promise.resolve(["127.0.0.1"]);
      },
    });
    assert.equal(res.status, 200);
    assert.equal(new TextDecoder().decode(res.body), `host=localhost:${port}`);
    // A name the certificate does not cover fails TLS even though the address is the same.
    await assert.rejects(
      safeFetch(`https://pinned.test:${port}/`, {
        allowPrivate: true,
        ca: TEST_CA,
        resolver: () => Promise.resolve(["127.0.0.1"]),
      }),
      (e: unknown) => e instanceof FetchFailedError && e.kind === "tls",
    );
    // Without our CA the self-signed certificate is untrusted.
    await assert.rejects(
      safeFetch(site.url("/"), { allowPrivate: true }),
      (e: unknown) => e instanceof FetchFailedError && e.kind === "tls",
    );
    assert.ok(calls >= 1);
  } finally {
    await site.close();
  }
});

Deno.test("safeFetch refuses loopback without allowPrivate and never follows redirects", async () => {
  const site = serveSite({
    "/r": { status: 302, headers: { location: "/target" } },
    "/big": { body: "x".repeat(100_000), headers: { "content-type": "text/plain" } },
    "/slow": { delayMs: 2_000, body: "late" },
  });
  try {
    await assert.rejects(
      safeFetch(site.url("/r"), { allowPrivate: false }),
      (e: unknown) => e instanceof TargetRefusedError && e.reason === "private_address",
    );
    const r = await safeFetch(site.url("/r"), { allowPrivate: true });
    assert.equal(r.status, 302);
    assert.equal(r.headers.get("location"), "/target");
    assert.deepEqual(site.hits, ["/r"]);
    const big = await safeFetch(site.url("/big"), { allowPrivate: true, maxBytes: 1000 });
    assert.equal(big.truncated, true);
    assert.equal(big.body.byteLength, 1000);
    await assert.rejects(
      safeFetch(site.url("/big"), { allowPrivate: true, maxBytes: 1000, failOnTooLarge: true }),
      (e: unknown) => e instanceof FetchFailedError && e.kind === "too_large",
    );
    await assert.rejects(
      safeFetch(site.url("/slow"), { allowPrivate: true, timeoutMs: 200 }),
      (e: unknown) => e instanceof FetchFailedError && e.kind === "timeout",
    );
    const post = await safeFetch(site.url("/r"), {
      allowPrivate: true,
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    assert.equal(post.status, 302);
    assert.ok(post.ttfbMs >= 0 && post.totalMs >= post.ttfbMs);
  } finally {
    await site.close();
  }
});

Deno.test("safeFetch reports connection failures as network errors", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  await assert.rejects(
    safeFetch(`http://127.0.0.1:${port}/`, { allowPrivate: true, timeoutMs: 2000 }),
    (e: unknown) => e instanceof FetchFailedError && e.kind === "network",
  );
});
