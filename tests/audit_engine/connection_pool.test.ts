/**
 * Kept-alive connections (domain/net/pool.ts): a crawl reuses its connections, a pooled
 * connection only ever serves a request whose guard check pinned its own address (a host that
 * resolves elsewhere the next time gets a new connection there, or a refusal), a body left
 * unread never reaches the next request, and a caller without a pool stays one-shot. Servers are
 * real, on loopback, and count the TCP connections they accept.
 */
import assert from "node:assert/strict";
import { ConnectionPool, MAX_AGENTS } from "../../domain/net/pool.ts";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import { FetchFailedError, safeFetch, TargetRefusedError } from "../../domain/net/safe_fetch.ts";
import { TEST_CA } from "../helpers/sites.ts";

const FIXTURES = new URL("../helpers/fixtures/", import.meta.url);

/** A loopback server that counts its connections (one client port, one connection). */
function countingServer(
  hostname: string,
  handle: (path: string) => Response,
  port = 0,
  tls = false,
) {
  const connections = new Set<number>();
  /** The client port (connection) of each request, by path. */
  const portOf = new Map<string, number>();
  let requests = 0;
  const ac = new AbortController();
  const cert = tls
    ? {
      cert: TEST_CA,
      key: Deno.readTextFileSync(new URL("key.pem", FIXTURES)),
    }
    : {};
  const server = Deno.serve({ hostname, port, onListen() {}, signal: ac.signal, ...cert }, (
    req,
    info,
  ) => {
    connections.add(info.remoteAddr.port);
    requests++;
    portOf.set(new URL(req.url).pathname, info.remoteAddr.port);
    return handle(new URL(req.url).pathname);
  });
  return {
    port: server.addr.port,
    portOf,
    get connections() {
      return connections.size;
    },
    get requests() {
      return requests;
    },
    close: async () => {
      ac.abort();
      await server.finished;
    },
  };
}

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("a crawl reuses its connections: far fewer connections than requests", async () => {
  const pages = 40;
  const site = countingServer("127.0.0.1", (path) => {
    const m = /^\/p\/(\d+)$/.exec(path);
    const i = path === "/" ? 0 : m ? Number(m[1]) : -1;
    if (i < 0 || i >= pages) return new Response("missing", { status: 404 });
    // The home page links every page, as a site's sections do: a step then has many to fetch.
    const targets = i === 0 ? [...Array(pages).keys()] : [1, 2, 3].map((d) => (i + d) % pages);
    const links = targets.map((t) => `<a href="/p/${t}">page ${t}</a>`).join(" ");
    return new Response(
      `<!doctype html><html lang="en"><head><title>Page ${i} of the site</title></head>` +
        `<body><h1>Page ${i}</h1><p>Words about page ${i}.</p>${links}</body></html>`,
      { headers: { "content-type": "text/html; charset=utf-8" } },
    );
  });
  try {
    const out = await runAuditDetailed({
      startUrl: `http://127.0.0.1:${site.port}/`,
      maxPages: pages,
      concurrency: 4,
      allowPrivate: true,
      timeoutMs: 5_000,
      stepPages: 20,
    });
    assert.equal(out.report.pages_crawled, pages);
    // Before keep-alive: one connection per request. Now a step's pages share at most
    // `concurrency` connections (robots.txt, sitemaps and the post-crawl probes stay one-shot).
    const pagePaths = [...site.portOf.keys()].filter((p) => p === "/" || p.startsWith("/p/"));
    assert.equal(pagePaths.length, pages);
    const pageConnections = new Set(pagePaths.map((p) => site.portOf.get(p))).size;
    assert.ok(pageConnections * 3 <= pages, `${pageConnections} connections for ${pages} pages`);
  } finally {
    await site.close();
  }
});

Deno.test("a pooled connection serves only its checked address; a new answer gets a new one", async () => {
  const a = countingServer("127.0.0.1", (p) => new Response(`A ${p}`));
  // The same port on another loopback address: only the checked address tells them apart.
  const b = countingServer("127.0.0.2", (p) => new Response(`B ${p}`), a.port);
  const pool = new ConnectionPool();
  const answers = ["127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2", "10.0.0.5"];
  let lookups = 0;
  const resolver = () => Promise.resolve([answers[lookups++]]);
  const get = (path: string) =>
    safeFetch(`http://rebind.test:${a.port}${path}`, {
      allowPrivate: false,
      allowLoopback: true,
      resolver,
      pool,
    });
  try {
    assert.equal(decode((await get("/1")).body), "A /1");
    assert.equal(decode((await get("/2")).body), "A /2");
    // The name now resolves elsewhere: the kept connection to A is not used.
    assert.equal(decode((await get("/3")).body), "B /3");
    assert.equal(decode((await get("/4")).body), "B /4");
    assert.deepEqual([a.connections, a.requests, b.connections, b.requests], [1, 2, 1, 2]);
    // And to a private address: refused by the guard, though connections to the name are pooled.
    await assert.rejects(
      get("/5"),
      (e: unknown) => e instanceof TargetRefusedError && e.reason === "private_address",
    );
    assert.equal(a.requests + b.requests, 4);
  } finally {
    pool.close();
    await a.close();
    await b.close();
  }
});

Deno.test("a TLS connection verified for one name is never reused for another", async () => {
  const site = countingServer("127.0.0.1", (p) => new Response(`tls ${p}`), 0, true);
  const pool = new ConnectionPool();
  const get = (host: string, path: string) =>
    safeFetch(`https://${host}:${site.port}${path}`, {
      allowPrivate: true,
      ca: TEST_CA,
      resolver: () => Promise.resolve(["127.0.0.1"]),
      pool,
    });
  try {
    assert.equal(decode((await get("localhost", "/1")).body), "tls /1");
    assert.equal(decode((await get("localhost", "/2")).body), "tls /2");
    assert.equal(site.connections, 1);
    // Same address and port, a name the certificate does not cover: a new handshake, which fails.
    await assert.rejects(
      get("pinned.test", "/3"),
      (e: unknown) => e instanceof FetchFailedError && e.kind === "tls",
    );
    assert.equal(site.requests, 2);
    // Without the CA the same name is another target too: untrusted, though a trusted connection
    // to it is open.
    await assert.rejects(
      safeFetch(`https://localhost:${site.port}/4`, {
        allowPrivate: true,
        resolver: () => Promise.resolve(["127.0.0.1"]),
        pool,
      }),
      (e: unknown) => e instanceof FetchFailedError && e.kind === "tls",
    );
    assert.equal(site.requests, 2);
  } finally {
    pool.close();
    await site.close();
  }
});

Deno.test("a body left unread never reaches the next request on a kept connection", async () => {
  const big = "x".repeat(300_000);
  const site = countingServer("127.0.0.1", (path) => {
    if (path === "/missing") return new Response("not here ".repeat(50), { status: 404 });
    if (path === "/big") return new Response(big, { headers: { "content-type": "text/html" } });
    if (path === "/stream") {
      // No content-length: an unwanted body of unknown size closes its connection.
      return new Response(new Blob(["chunked ".repeat(10_000)]).stream(), {
        headers: { "content-type": "application/pdf" },
      });
    }
    return new Response(`page ${path}`, { headers: { "content-type": "text/html" } });
  });
  const pool = new ConnectionPool();
  const url = (p: string) => `http://127.0.0.1:${site.port}${p}`;
  const html = (_s: number, h: Headers) => (h.get("content-type") ?? "").includes("html");
  try {
    const skipped = await safeFetch(url("/missing"), {
      allowPrivate: true,
      pool,
      shouldReadBody: () => false,
    });
    assert.equal(skipped.status, 404);
    assert.equal(skipped.body.byteLength, 0);
    assert.equal(
      decode((await safeFetch(url("/a"), { allowPrivate: true, pool })).body),
      "page /a",
    );
    const cut = await safeFetch(url("/big"), { allowPrivate: true, pool, maxBytes: 1000 });
    assert.equal(cut.truncated, true);
    assert.equal(
      decode((await safeFetch(url("/b"), { allowPrivate: true, pool })).body),
      "page /b",
    );
    const pdf = await safeFetch(url("/stream"), { allowPrivate: true, pool, shouldReadBody: html });
    assert.equal(pdf.body.byteLength, 0);
    const head = await safeFetch(url("/c"), { allowPrivate: true, pool, method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(
      decode((await safeFetch(url("/d"), { allowPrivate: true, pool })).body),
      "page /d",
    );
    // The drained 404 and the HEAD kept their connection; the cut body and the unsized one did not.
    assert.equal(site.requests, 7);
    assert.equal(site.connections, 3);
  } finally {
    pool.close();
    await site.close();
  }
});

Deno.test("without a pool every request is one-shot; a closed pool goes one-shot too", async () => {
  const site = countingServer("127.0.0.1", (p) => new Response(`ok ${p}`));
  const url = (p: string) => `http://127.0.0.1:${site.port}${p}`;
  try {
    for (const p of ["/1", "/2", "/3"]) await safeFetch(url(p), { allowPrivate: true });
    assert.equal(site.connections, 3);
    const pool = new ConnectionPool();
    await safeFetch(url("/4"), { allowPrivate: true, pool });
    await safeFetch(url("/5"), { allowPrivate: true, pool });
    assert.equal(site.connections, 4);
    pool.close();
    await safeFetch(url("/6"), { allowPrivate: true, pool });
    await safeFetch(url("/7"), { allowPrivate: true, pool });
    assert.equal(site.connections, 6);
    assert.equal(pool.size, 0);
  } finally {
    await site.close();
  }
});

Deno.test("a pool holds at most MAX_AGENTS agents, one per pinned target", async () => {
  const site = countingServer("127.0.0.1", (p) => new Response(`ok ${p}`));
  const pool = new ConnectionPool();
  try {
    // Each CA is another target (a connection trusted under one CA is not reused under another).
    for (let i = 0; i < MAX_AGENTS + 6; i++) {
      const res = await safeFetch(`http://127.0.0.1:${site.port}/${i}`, {
        allowPrivate: true,
        pool,
        ca: `ca ${i}`,
      });
      assert.equal(res.status, 200);
      assert.ok(pool.size <= MAX_AGENTS);
    }
    assert.equal(pool.size, MAX_AGENTS);
    assert.equal(site.connections, MAX_AGENTS + 6);
  } finally {
    pool.close();
    await site.close();
  }
});

/** A raw TCP server on loopback: `serve` gets each connection (its `n`th); `close` ends them all. */
function rawServer(serve: (conn: Deno.Conn, n: number) => Promise<void>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const serving = (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      serve(conn, conns.length).catch(() => {});
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    get accepted() {
      return conns.length;
    },
    async close() {
      listener.close();
      await serving.catch(() => {});
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
    },
  };
}

Deno.test("a kept connection the server dropped is retried once on a new connection", async () => {
  // A raw server that answers the first request of each connection, then drops the connection
  // when a second request arrives on it (a server that timed out its idle connections).
  const server = rawServer(async (conn, n) => {
    const buf = new Uint8Array(4096);
    let requests = 0;
    let seen = "";
    while (true) {
      const read = await conn.read(buf).catch(() => null);
      if (read === null) break;
      seen += new TextDecoder().decode(buf.subarray(0, read));
      if (!seen.includes("\r\n\r\n")) continue;
      seen = "";
      if (++requests > 1) break;
      const body = `conn ${n}`;
      await conn.write(
        new TextEncoder().encode(
          `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${body.length}` +
            `\r\nconnection: keep-alive\r\n\r\n${body}`,
        ),
      );
    }
    try {
      conn.close();
    } catch { /* closed */ }
  });
  const port = server.port;
  const pool = new ConnectionPool();
  try {
    const first = await safeFetch(`http://127.0.0.1:${port}/a`, { allowPrivate: true, pool });
    assert.equal(decode(first.body), "conn 1");
    const second = await safeFetch(`http://127.0.0.1:${port}/b`, { allowPrivate: true, pool });
    assert.equal(decode(second.body), "conn 2");
    assert.equal(server.accepted, 2);
  } finally {
    pool.close();
    await server.close();
  }
});

Deno.test("an unwanted body still draining at the deadline: the known status, not a timeout", async () => {
  // A raw server that sends a 404's head and one byte of its 100-byte body, then waits.
  const server = rawServer(async (conn) => {
    await conn.read(new Uint8Array(4096)).catch(() => null);
    await conn.write(
      new TextEncoder().encode("HTTP/1.1 404 Not Found\r\ncontent-length: 100\r\n\r\nx"),
    ).catch(() => 0);
  });
  const pool = new ConnectionPool();
  try {
    const res = await safeFetch(`http://127.0.0.1:${server.port}/gone`, {
      allowPrivate: true,
      pool,
      timeoutMs: 300,
      shouldReadBody: () => false,
    });
    assert.equal(res.status, 404);
    assert.equal(res.body.byteLength, 0);
  } finally {
    pool.close();
    await server.close();
  }
});
