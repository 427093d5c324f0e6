/**
 * The server-file writers of the redirect map against what hostile sites send: every line they
 * write is plain (quoted nginx strings with no quote, backslash, `$` or brace inside; Apache
 * patterns of `[A-Za-z0-9/_-]` and `\xHH` only), and what they cannot write that way is left out
 * with a reason, never written approximately.
 */
import assert from "node:assert/strict";
import { apacheLine, nginxLine } from "../../domain/audits/redirect_config.ts";

const NGINX_LINE = /^ {4}"\/[^"\\${}\s]*" "[^"\\${}\s;]*";$/;
const APACHE_LINE = /^RedirectMatch 301 "\^(?:[A-Za-z0-9/_-]|\\x[0-9a-f]{2})*\$" "[^"\\$\s;]+"$/;

Deno.test("redirect files: hostile sources are written inert or left out with a reason", () => {
  const to = "/live-page";
  const cases: { from: string; nginx: boolean; apache: boolean }[] = [
    // `;`, quotes and braces: the URL parser percent-encodes the quote and braces.
    { from: `https://s.test/a;b"{c}'d`, nginx: true, apache: true },
    // An encoded newline: harmless raw (nginx), a control character once decoded (Apache).
    { from: "https://s.test/a%0Areturn%20200", nginx: true, apache: false },
    // `$`: a variable to nginx, kept out; Apache escapes it as a byte.
    { from: "https://s.test/a$host", nginx: false, apache: true },
    // A query: nginx's $request_uri holds it; RedirectMatch never sees it.
    { from: "https://s.test/a?x=1", nginx: true, apache: false },
    // Regex metacharacters and spaces.
    { from: "https://s.test/(.*)+[x]|^ end", nginx: true, apache: true },
    // Invalid percent-encoding.
    { from: "https://s.test/%E0%A4%A", nginx: true, apache: false },
    // Non-ASCII (encoded by the parser) and a literal backslash (made a slash by it).
    { from: "https://s.test/ü\\x", nginx: true, apache: true },
  ];
  for (const c of cases) {
    const n = nginxLine(c.from, to);
    const a = apacheLine(c.from, to);
    assert.equal("line" in n, c.nginx, `nginx ${c.from}: ${JSON.stringify(n)}`);
    assert.equal("line" in a, c.apache, `apache ${c.from}: ${JSON.stringify(a)}`);
    if ("line" in n) assert.match(n.line, NGINX_LINE);
    else assert.ok(n.reason.length > 10);
    if ("line" in a) {
      assert.match(a.line, APACHE_LINE);
      // The pattern matches the decoded path exactly, as Apache compares it.
      const pattern = /"\^(.*)\$"/.exec(a.line)![1];
      const decoded = decodeURIComponent(new URL(c.from).pathname);
      const bytes = String.fromCharCode(...new TextEncoder().encode(decoded));
      assert.ok(new RegExp(`^${pattern}$`).test(bytes), c.from);
      assert.ok(!new RegExp(`^${pattern}$`).test(bytes + "x"), c.from);
    } else assert.ok(a.reason.length > 10);
  }
});

Deno.test("redirect files: destinations that are not plain http(s) URLs or paths are left out", () => {
  const from = "https://s.test/old";
  for (const to of ['/a"b', "/a b", "/a$1", "/a;b", "javascript:alert(1)", "/a{b}", "/a\nb"]) {
    const n = nginxLine(from, to);
    const a = apacheLine(from, to);
    assert.ok("reason" in n && "reason" in a, to);
  }
  assert.ok("line" in nginxLine(from, "https://s.test/new?x=1&y=2"));
});
