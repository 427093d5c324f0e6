/**
 * Hostile sites for the isolation benchmark, as their own process: `links` serves pages of
 * 30,000 distinct internal links each (the link bomb); `robots` serves a 500 KiB robots.txt of
 * wildcard rules and pages linking 1,400-character URLs (the robots bomb). Prints its port.
 *
 * Run: deno run -A tests/bench/servers/bomb_site.ts links|robots
 */
const kind = Deno.args[0] ?? "links";
const LINKS = 30_000;
const line = `Disallow: /${"*a".repeat(19)}*b\n`;
let robots = "User-agent: *\n";
if (kind === "robots") { while (robots.length + line.length <= 500 * 1024) robots += line; }
const long = "a".repeat(1_400);

function page(path: string): string {
  const n = Number(/(\d+)$/.exec(path)?.[1] ?? 0);
  let links = "";
  if (kind === "links") {
    for (let i = 0; i < LINKS; i++) links += `<a href="/p/${n + 1}/${i}">x</a>`;
  } else {
    for (let i = 1; i <= 40; i++) links += `<a href="/${long}${n * 41 + i}">x</a>`;
  }
  return `<!doctype html><html lang="en"><head><title>Bomb ${path.slice(0, 40)}</title></head>` +
    `<body>${links}</body></html>`;
}

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  const path = new URL(req.url).pathname;
  if (path === "/robots.txt") {
    return new Response(kind === "robots" ? robots : "User-agent: *\nDisallow:\n");
  }
  return new Response(page(path), { headers: { "content-type": "text/html; charset=utf-8" } });
});
console.log(server.addr.port);
