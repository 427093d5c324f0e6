/**
 * A generated site of N pages for the crawl benchmarks, run as its own process so its memory is
 * not counted with the service's. Page i links 20 pseudo-random pages and the next one; every
 * 500th page has no title and links a missing page. `GET /__stats` answers how many requests
 * were served and how many paths were requested more than once. Prints its port on stdout.
 *
 * Run: deno run -A tests/bench/servers/big_site.ts 100000
 */
const N = Number(Deno.args[0] ?? 1000);
const WORDS = ("search engines read pages quickly when the markup is clean and the links are " +
  "plain and every heading says what follows in a few honest words").split(" ");
const seen = new Map<string, number>();
let served = 0;

function pageHtml(i: number): string {
  const links: string[] = [];
  for (let k = 1; k <= 20; k++) links.push(`/p/${(i * 7 + k * 13) % N}`);
  if (i + 1 < N) links.push(`/p/${i + 1}`);
  if (i % 500 === 7) links.push(`/gone/${i}`);
  const words: string[] = [];
  for (let k = 0; k < 300; k++) words.push(WORDS[(i + k * 3) % WORDS.length]);
  const title = i % 500 === 7 ? "" : `<title>Generated page number ${i} of the big site</title>`;
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">${title}
<meta name="description" content="Benchmark page ${i}: a generated page with enough text and links to look real.">
<meta name="viewport" content="width=device-width, initial-scale=1"></head><body>
<nav><ul>${links.map((l, k) => `<li><a href="${l}">Topic ${k}</a></li>`).join("")}</ul></nav>
<main><h1>Page ${i}</h1><p>${words.join(" ")} ${i}.</p></main></body></html>`;
}

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  const path = new URL(req.url).pathname;
  if (path === "/__stats") {
    let twice = 0;
    for (const n of seen.values()) if (n > 1) twice++;
    return Response.json({ served, distinct: seen.size, twice });
  }
  served++;
  seen.set(path, (seen.get(path) ?? 0) + 1);
  if (path === "/robots.txt") return new Response("User-agent: *\nDisallow:\n");
  const m = /^\/p\/(\d+)$/.exec(path);
  const i = path === "/" ? 0 : m ? Number(m[1]) : -1;
  if (i < 0 || i >= N) return new Response("not found", { status: 404 });
  return new Response(pageHtml(i), {
    headers: { "content-type": "text/html; charset=utf-8", "content-encoding": "identity" },
  });
});
console.log(server.addr.port);
