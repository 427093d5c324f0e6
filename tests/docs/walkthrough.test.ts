/**
 * The README's walk-through, run as a script: its `sh` block is read from README.md and every
 * `curl` line is executed in order, as written, against the real app with the development
 * settings of `.env.dev` (the throwaway ADMIN_TOKEN, private targets allowed) and a loopback site
 * standing in for example.com. `export NAME=prefix...` takes the value with that prefix from the
 * answer before it; a placeholder id (`proj_...`, `aud_...`) is the newest id of its kind any
 * answer gave; `$(od … /dev/urandom …)` is a fresh random key. A GET of an audit, re-check or
 * article polls until it ends, as the README says to. Every step must succeed: the re-check runs
 * on credits the operator endpoint granted, with the live key the other operator endpoint minted.
 */
import assert from "node:assert/strict";
import { DEV_ADMIN_TOKEN, devHints, loadConfig } from "../../config.ts";
import { startTestApp } from "../helpers/app.ts";
import { pollUntil } from "../helpers/jobs.ts";
import { html, page, type Route, serveSite } from "../helpers/sites.ts";

const DEV_BASE = "http://localhost:8000";
/** The README's random Idempotency-Key, the one command substitution it uses. */
const RANDOM_KEY = "od -An -N16 -tx1 /dev/urandom | tr -d ' \\n'";
const ID = /^(acct|proj|aud|rck|art|key)_[0-9a-z]{10,}$/;

/** The `.env.dev` settings, as `deno task dev` loads them. */
function devEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (
    const line of Deno.readTextFileSync(new URL("../../.env.dev", import.meta.url)).split("\n")
  ) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2];
  }
  return out;
}

/** The shell block under "## Walk-through", its continued lines joined. */
function walkthroughLines(): string[] {
  const readme = Deno.readTextFileSync(new URL("../../README.md", import.meta.url));
  const at = readme.indexOf("## Walk-through");
  assert.ok(at >= 0, "the README has its walk-through");
  const start = readme.indexOf("```sh\n", at);
  const end = readme.indexOf("\n```", start + 6);
  return readme.slice(start + 6, end).replace(/\\\n\s*/g, " ").split("\n");
}

/**
 * A POSIX-ish word splitter: quotes, `$VAR`, the README's one `$(…)`; stops at an unquoted `#`.
 */
function shellWords(line: string, vars: Record<string, string>): string[] {
  const words: string[] = [];
  let cur: string | null = null;
  let i = 0;
  const expand = (): string => {
    const rest = line.slice(i);
    if (rest.startsWith("$(")) {
      let depth = 0;
      let j = 0;
      for (; j < rest.length; j++) {
        if (rest[j] === "(") depth++;
        if (rest[j] === ")" && --depth === 0) break;
      }
      const command = rest.slice(2, j);
      if (command !== RANDOM_KEY) throw new Error(`unexpected command $(${command})`);
      i += j;
      return [...crypto.getRandomValues(new Uint8Array(16))]
        .map((b) => b.toString(16).padStart(2, "0")).join("");
    }
    const m = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(rest);
    if (!m) return "$";
    i += m[0].length - 1;
    if (!(m[1] in vars)) throw new Error(`unset variable $${m[1]} in: ${line}`);
    return vars[m[1]];
  };
  for (; i < line.length; i++) {
    const ch = line[i];
    if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      cur = (cur ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (ch === '"') {
      cur ??= "";
      for (i++; line[i] !== '"'; i++) cur += line[i] === "$" ? expand() : line[i];
    } else if (ch === "$") {
      cur = (cur ?? "") + expand();
    } else if (/\s/.test(ch)) {
      if (cur !== null) words.push(cur);
      cur = null;
    } else if (ch === "#" && cur === null) {
      break;
    } else {
      cur = (cur ?? "") + ch;
    }
  }
  if (cur !== null) words.push(cur);
  return words;
}

/** Every prefixed id in an answer, newest last. */
function idsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string" && ID.test(value)) out.push(value);
  else if (Array.isArray(value)) { for (const v of value) idsIn(v, out); }
  else if (value && typeof value === "object") {
    for (const v of Object.values(value)) {
      idsIn(v, out);
    }
  }
  return out;
}

/** A small site: a home page and two pages without a title (what the re-check step looks at). */
function site() {
  const routes = (p: string): Route | undefined => {
    if (p === "/") {
      return html(page({ title: "Running shoes, chosen well", links: ["/a", "/b", "/c"] }));
    }
    if (p === "/a") return html(page({ title: null, key: "a" }));
    if (p === "/b") return html(page({ title: null, key: "b" }));
    if (p === "/c") return html(page({ title: "How we test running shoes", key: "c" }));
    return undefined;
  };
  return serveSite(routes);
}

/** Terminal statuses of what the README polls. */
const ENDS: [RegExp, string[], string][] = [
  [/\/v1\/audits\/aud_[0-9a-z]+$/, ["completed", "failed"], "completed"],
  [/\/v1\/rechecks\/rck_[0-9a-z]+$/, ["completed", "failed"], "completed"],
  [/\/v1\/articles\/art_[0-9a-z]+$/, ["ready", "failed"], "ready"],
];

Deno.test("the README walk-through runs step by step against the dev settings, re-check included", async () => {
  // The README's key is random on any Unix: od and tr are POSIX.
  const od = await new Deno.Command("sh", { args: ["-c", `printf %s "$(${RANDOM_KEY})"`] })
    .output();
  assert.match(new TextDecoder().decode(od.stdout), /^[0-9a-f]{32}$/);

  const env = devEnv();
  assert.equal(env.ADMIN_TOKEN, DEV_ADMIN_TOKEN, ".env.dev holds the throwaway operator token");
  const { KV_PATH: _file, PUBLIC_BASE_URL: _base, ...settings } = env;
  const fake = site();
  const app = await startTestApp({ env: settings });
  try {
    const vars: Record<string, string> = {};
    const newest = new Map<string, string>();
    // deno-lint-ignore no-explicit-any
    let last: any = null;
    const ran: string[] = [];
    for (const raw of walkthroughLines()) {
      const line = raw.trim();
      if (line === "" || line.startsWith("#")) continue;
      const exp = /^export ([A-Z_]+)=([a-z_]+)\.\.\./.exec(line);
      if (exp) {
        const [, name, prefix] = exp;
        // The whole value, not a field that names the prefix alone (`key_prefix`).
        const value = Object.values(last ?? {}).find((v) =>
          typeof v === "string" && v.startsWith(prefix) && v.length > prefix.length + 8
        );
        assert.ok(typeof value === "string", `${name}: no ${prefix}… in ${JSON.stringify(last)}`);
        vars[name] = value;
        continue;
      }
      assert.ok(line.startsWith("curl "), `a step the test cannot run: ${line}`);
      const ids = (s: string) =>
        s.replace(/\b(acct|proj|aud|rck|art|key)_\.\.\./g, (_, kind: string) => {
          const id = newest.get(kind);
          if (!id) throw new Error(`no ${kind}_ id yet for: ${line}`);
          return id;
        });
      const words = shellWords(ids(line), vars);
      let method = "GET";
      let url = "";
      let body: string | undefined;
      const headers: Record<string, string> = {};
      for (let i = 1; i < words.length; i++) {
        const w = words[i];
        if (w === "-X") method = words[++i];
        else if (w === "-H") {
          const [k, ...v] = words[++i].split(":");
          headers[k.trim()] = v.join(":").trim();
        } else if (w === "-d") body = words[++i].replaceAll("https://example.com", fake.origin);
        else if (w === "-s" || w === "-sOJ") continue;
        else if (w === "-o") i++; // the output file: the body is read here instead
        else if (w.startsWith(DEV_BASE)) url = app.url + w.slice(DEV_BASE.length);
        else throw new Error(`unexpected curl word ${w} in: ${line}`);
      }
      assert.ok(url, `no URL in: ${line}`);
      const path = new URL(url).pathname;
      const send = async () => {
        const r = await fetch(url, { method, headers, body });
        const text = await r.text();
        let json = null;
        try {
          json = JSON.parse(text);
        } catch {
          // A file (CSV, NDJSON, Markdown): its status is what the step promises.
        }
        return { status: r.status, text, json };
      };
      const end = method === "GET" ? ENDS.find(([re]) => re.test(path)) : undefined;
      const res = end
        ? await pollUntil(send, (r) => end[1].includes(r.json?.status), {
          timeoutMs: 120_000,
          intervalMs: 100,
          what: path,
        })
        : await send();
      const what = `${method} ${path} -> ${res.status} ${res.text.slice(0, 300)}`;
      assert.ok(res.status >= 200 && res.status < 300, what);
      if (end) assert.equal(res.json.status, end[2], what);
      last = res.json;
      for (const id of idsIn(res.json)) newest.set(id.slice(0, id.indexOf("_")), id);
      ran.push(`${method} ${path.replace(/\/(acct|proj|aud|rck|art|key)_[0-9a-z]+/g, "/{id}")}`);
    }

    // Every step of the walk-through is in the README and ran.
    for (
      const step of [
        "POST /v1/accounts",
        "GET /v1/account",
        "POST /v1/api-keys",
        "GET /v1/api-keys",
        "POST /v1/projects",
        "GET /v1/projects",
        "POST /v1/projects/{id}/audits",
        "GET /v1/audits/{id}",
        "GET /v1/audits/{id}/report",
        "POST /v1/audits/{id}/shares",
        "GET /v1/audits/{id}/summary.md",
        "GET /v1/audits/{id}/pages",
        "GET /v1/audits/{id}/issues",
        "POST /admin/accounts/{id}/credits",
        "POST /admin/accounts/{id}/live-keys",
        "POST /v1/audits/{id}/issues/title_missing/recheck",
        "GET /v1/rechecks/{id}",
        "POST /v1/projects/{id}/articles",
        "GET /v1/articles/{id}",
      ]
    ) assert.ok(ran.includes(step), `${step} in ${ran.join("; ")}`);
    assert.match(vars.KEY, /^sk_sandbox_/);
    assert.match(vars.LIVE_KEY, /^sk_live_/);
    // The re-check found both untitled pages still failing, paid from the granted credits.
    const recheck = await app.req("GET", `/v1/rechecks/${newest.get("rck")}`, {
      key: vars.LIVE_KEY,
    });
    assert.equal(recheck.body.counts.still_failing, 2, recheck.text);
    const credits = await app.req("GET", "/v1/credits", { key: vars.LIVE_KEY });
    assert.equal(credits.body.balance_credits, 499);
  } finally {
    await app.close();
    await fake.close();
  }
});

Deno.test("deno task dev prints how to grant credits, with a curl line that works", async () => {
  const config = loadConfig(devEnv());
  const hints = devHints(config);
  assert.ok(hints.length > 0, "the dev settings print the hint");
  assert.equal(devHints(loadConfig({ ADMIN_TOKEN: "a-real-operator-token-0123" })).length, 0);
  assert.equal(devHints(loadConfig({})).length, 0);

  const { KV_PATH: _file, PUBLIC_BASE_URL: _base, ...settings } = devEnv();
  const app = await startTestApp({ env: settings });
  try {
    const { accountId } = await app.signup();
    const minted = await app.req("POST", `/admin/accounts/${accountId}/live-keys`, {
      headers: { authorization: `Bearer ${DEV_ADMIN_TOKEN}` },
    });
    assert.equal(minted.status, 201, minted.text);
    const live = minted.body.api_key;
    const text = hints.join("\n").replace(/\\\n\s*/g, " ");
    const line = text.split("\n").find((l) => l.includes("/credits"))!.trim();
    const words = shellWords(line.replace("acct_...", accountId), {});
    assert.equal(words[0], "curl");
    const headers: Record<string, string> = {};
    let body = "";
    let url = "";
    for (let i = 1; i < words.length; i++) {
      if (words[i] === "-H") {
        const [k, ...v] = words[++i].split(":");
        headers[k.trim()] = v.join(":").trim();
      } else if (words[i] === "-d") body = words[++i];
      else if (words[i].startsWith(DEV_BASE)) url = app.url + words[i].slice(DEV_BASE.length);
    }
    const res = await fetch(url, { method: "POST", headers, body });
    assert.equal(res.status, 201, await res.text());
    const credits = await app.req("GET", "/v1/credits", { key: live });
    assert.equal(credits.body.balance_credits, 500);
  } finally {
    await app.close();
  }
});
