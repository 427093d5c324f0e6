/**
 * Request cases for the schema fuzzer: one fast-check arbitrary per operation of the OpenAPI
 * document, mixing valid requests (built from the schemas and pools of real ids) with requests
 * that are invalid in exactly one known way (`invalid` names it), so the fuzzer can assert both
 * "only documented answers" and "an invalid request is never a success and writes nothing".
 */
import fc from "fast-check";
import {
  deref,
  type Doc,
  invalidValue,
  nastyString,
  pickAt,
  validValue,
} from "./schema_arbitraries.ts";

export interface Operation {
  method: string;
  /** The templated path, e.g. `/v1/projects/{projectId}`. */
  path: string;
  // deno-lint-ignore no-explicit-any
  op: any;
  secured: boolean;
  pathParams: string[];
  queryParams: { name: string; required: boolean }[];
  idempotent: boolean;
  // deno-lint-ignore no-explicit-any
  bodySchema: any | null;
  bodyRequired: boolean;
  statuses: Set<string>;
}

export interface Case {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
  /** Why the request must fail, or null when it may succeed. */
  invalid: string | null;
  /** The X-Request-Id sent, if any. */
  requestId?: string;
}

/** What the fuzzer knows about the running service: keys and id pools (growing as it learns). */
export interface World {
  keys: { sandbox: string; live: string; revoked: string };
  pools: Record<string, () => string[]>;
  /** Idempotency keys shared across cases and endpoints (replays and conflicts). */
  sharedIdempotencyKeys: string[];
}

export function operations(doc: Doc): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    // deno-lint-ignore no-explicit-any
    for (const [method, op] of Object.entries(methods as Record<string, any>)) {
      if (!path.startsWith("/v1/") || path === "/v1/openapi.json") continue;
      // deno-lint-ignore no-explicit-any
      const params: any[] = op.parameters ?? [];
      const body = op.requestBody?.content?.["application/json"]?.schema ?? null;
      out.push({
        method: method.toUpperCase(),
        path,
        op,
        secured: Array.isArray(op.security) && op.security.length > 0,
        pathParams: params.filter((p) => p.in === "path").map((p) => p.name),
        queryParams: params.filter((p) => p.in === "query").map((p) => ({
          name: p.name,
          required: !!p.required,
        })),
        idempotent: params.some((p) => p.in === "header" && /^idempotency-key$/i.test(p.name)),
        bodySchema: body ? deref(doc, body) : null,
        bodyRequired: !!op.requestBody?.required,
        statuses: new Set(Object.keys(op.responses)),
      });
    }
  }
  return out;
}

/** Printable Latin-1 without CR/LF/NUL: what `fetch` lets through as a header value. */
const headerSafe = (max: number) =>
  fc.string({
    unit: fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0x21, max: 0x7e }) },
      { weight: 1, arbitrary: fc.integer({ min: 0xa0, max: 0xff }) },
      { weight: 1, arbitrary: fc.constant(0x20) },
    ).map((c) => String.fromCharCode(c)),
    minLength: 1,
    maxLength: max,
  }).map((s) => s.trim()).filter((s) => s.length > 0);

const ASCII_KEY = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  minLength: 1,
  maxLength: 200,
});

const PARAM_POOL: Record<string, string> = {
  projectId: "projects",
  project_id: "projects",
  auditId: "audits",
  articleId: "articles",
  recheckId: "rechecks",
  upgradeId: "upgrades",
};

function poolFor(op: Operation, name: string): string {
  if (name === "id") return op.path.startsWith("/v1/webhooks") ? "webhooks" : "keys";
  return PARAM_POOL[name] ?? "projects";
}

/** A path-parameter value: a known id, a random token, or a nasty string (percent-encoded). */
function paramValue(
  world: World,
  pool: string,
): fc.Arbitrary<{ v: string; invalid: string | null }> {
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc.nat().map((i) => ({
        v: pickAt(world.pools[pool](), i) ?? "none_yet",
        invalid: null,
      })),
    },
    {
      weight: 2,
      arbitrary: nastyString(1, 60)
        // "." and ".." are path navigation, not ids: the URL parser removes them before sending.
        .filter((s) => s !== "." && s !== ".." && !/^(%2e|\.){1,2}$/i.test(s))
        .map((s) => ({ v: s, invalid: null })),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 101, max: 400 }).map((n) => ({
        v: "p".repeat(n),
        invalid: "path parameter longer than 100",
      })),
    },
  );
}

function authHeader(world: World): fc.Arbitrary<{ h?: string; invalid: string | null }> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant({ h: `Bearer ${world.keys.live}`, invalid: null }) },
    { weight: 6, arbitrary: fc.constant({ h: `Bearer ${world.keys.sandbox}`, invalid: null }) },
    { weight: 1, arbitrary: fc.constant({ h: undefined, invalid: "no Authorization" }) },
    {
      weight: 1,
      arbitrary: fc.constant({ h: `Bearer ${world.keys.revoked}`, invalid: "revoked key" }),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom("sk_sandbox_", "sk_live_", "")
        .chain((p) =>
          fc.string({
            unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789".split("")),
            minLength: 20,
            maxLength: 60,
          }).map((r) => p + r)
        )
        .map((k) => ({ h: `Bearer ${k}`, invalid: "unknown key" })),
    },
    {
      weight: 1,
      arbitrary: fc.oneof(
        headerSafe(80),
        fc.constant(`bearer ${world.keys.live}`),
        fc.constant(`Bearer  ${world.keys.live}`),
        fc.constant(`Basic ${btoa("user:pass")}`),
        fc.constant("Bearer"),
        fc.constant(`Bearer ${"a".repeat(300)}`),
        fc.constant(`Bearer ${world.keys.live}\u00e9`),
      ).map((h) => ({ h, invalid: "malformed Authorization" })),
    },
  );
}

const VALID_CT = ["application/json", "application/json; charset=utf-8", "Application/JSON"];
const WRONG_CT = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/jsonp",
];

interface BodyChoice {
  body?: string | Uint8Array<ArrayBuffer>;
  contentType?: string;
  invalid: string | null;
}

function bodyArb(doc: Doc, op: Operation, world: World): fc.Arbitrary<BodyChoice> {
  const schema = op.bodySchema;
  const ct = fc.constantFrom(...VALID_CT);
  if (!schema) {
    // No body documented (audits): empty, or JSON the route ignores.
    return fc.oneof(
      { weight: 4, arbitrary: fc.constant({ invalid: null }) },
      {
        weight: 1,
        arbitrary: fc.tuple(fc.jsonValue({ maxDepth: 2 }), ct).map(([v, c]) => ({
          body: JSON.stringify(v) ?? "null",
          contentType: c,
          invalid: null,
        })),
      },
    );
  }
  const valid = validValue(doc, schema, "", { project_id: world.pools.projects });
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.tuple(valid, ct, fc.constantFrom("", " ", "\n\t"))
        .map(([v, c, pad]) => ({
          body: pad + JSON.stringify(v) + pad,
          contentType: c,
          invalid: null,
        })),
    },
    {
      weight: 4,
      arbitrary: fc.tuple(invalidValue(doc, schema), ct).map(([v, c]) => ({
        body: JSON.stringify(v) ?? "null",
        contentType: c,
        invalid: "body violates the schema",
      })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.nat(), fc.string({ maxLength: 5 })).map(([v, cut, junk]) => {
        const text = JSON.stringify(v);
        return {
          body: text.slice(0, cut % Math.max(1, text.length)) + "\u0001" + junk,
          contentType: "application/json",
          invalid: "malformed JSON",
        };
      }),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.constantFrom(...WRONG_CT, undefined)).map(([v, c]) => ({
        body: JSON.stringify(v),
        contentType: c,
        invalid: "wrong content type",
      })),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 21, max: 400 }).map((d) => ({
        body: '{"a":'.repeat(d) + "1" + "}".repeat(d),
        contentType: "application/json",
        invalid: "nested too deep",
      })),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 65 * 1024, max: 200 * 1024 }).map((n) => ({
        body: JSON.stringify({ x: "y".repeat(n) }),
        contentType: "application/json",
        invalid: "oversized body",
      })),
    },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => ({
        body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, ...bytes]),
        contentType: "application/json",
        invalid: "not UTF-8",
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom("null", "[]", '"str"', "42", "true", "[{}]").map((b) => ({
        body: b,
        contentType: "application/json",
        invalid: "not an object",
      })),
    },
  );
}

const SHARED = 0;
/**
 * One request case for `op`. At most one dimension is deliberately invalid; an invalid case never
 * reuses a shared Idempotency-Key, since a key that already succeeded on the endpoint replays
 * that success by design.
 */
export function caseArb(doc: Doc, op: Operation, world: World, base: string): fc.Arbitrary<Case> {
  return fc.record({
    auth: op.secured ? authHeader(world) : fc.option(authHeader(world), { nil: undefined }),
    params: fc.tuple(...op.pathParams.map((p) => paramValue(world, poolFor(op, p)))),
    query: fc.tuple(
      ...op.queryParams.map((q) =>
        fc.oneof(
          {
            weight: 6,
            arbitrary: paramValue(world, poolFor(op, q.name)).map((x) => ({ ...x, present: true })),
          },
          {
            weight: 1,
            arbitrary: fc.constant({
              v: "",
              present: false,
              invalid: q.required ? `missing ${q.name}` : null,
            }),
          },
        )
      ),
    ),
    extraQuery: fc.option(fc.tuple(fc.string({ maxLength: 8 }), nastyString(0, 20)), {
      nil: undefined,
    }),
    idem: op.idempotent
      ? fc.oneof(
        { weight: 3, arbitrary: fc.constant({ kind: "none" as const }) },
        { weight: 2, arbitrary: fc.nat().map((i) => ({ kind: "shared" as const, i })) },
        {
          weight: 3,
          // Unique, so a fresh key never replays an earlier success.
          arbitrary: fc.tuple(fc.uuid(), ASCII_KEY).map(([u, k]) => ({
            kind: "fresh" as const,
            k: `${u}${k}`.slice(0, 200),
          })),
        },
        {
          weight: 1,
          arbitrary: fc.oneof(
            fc.integer({ min: 201, max: 1000 }).map((n) => "i".repeat(n)),
            fc.constant(""),
          ).map((k) => ({ kind: "bad" as const, k })),
        },
      )
      : fc.constant({ kind: "none" as const }),
    body: op.method === "POST" || op.method === "PUT"
      ? bodyArb(doc, op, world)
      : fc.constant({ invalid: null } as BodyChoice),
    requestId: fc.option(fc.oneof(headerSafe(120), fc.stringMatching(/^[A-Za-z0-9._-]{1,100}$/)), {
      nil: undefined,
    }),
    forwardedFor: fc.oneof(
      { weight: 8, arbitrary: fc.ipV4() },
      { weight: 1, arbitrary: fc.constant("203.0.113.7") },
      { weight: 1, arbitrary: headerSafe(70) },
    ),
    accept: fc.option(fc.constantFrom("*/*", "text/html", "application/xml", "application/json"), {
      nil: undefined,
    }),
  }).map((r) => {
    const invalid: string[] = [];
    if (r.auth?.invalid && op.secured) invalid.push(r.auth.invalid);
    let path = op.path;
    op.pathParams.forEach((name, i) => {
      const p = r.params[i];
      if (p.invalid) invalid.push(p.invalid);
      path = path.replace(`{${name}}`, encodeURIComponent(p.v.toWellFormed()));
    });
    const qs = new URLSearchParams();
    op.queryParams.forEach((q, i) => {
      const p = r.query[i] as { v: string; present: boolean; invalid: string | null };
      if (p.invalid) invalid.push(p.invalid);
      if (p.present) qs.append(q.name, p.v);
    });
    if (r.extraQuery && !op.queryParams.some((q) => q.name === r.extraQuery![0])) {
      qs.append(r.extraQuery[0] || "x", r.extraQuery[1]);
    }
    if (r.body.invalid) invalid.push(r.body.invalid);
    const headers: Record<string, string> = {};
    if (r.auth?.h !== undefined) headers.authorization = r.auth.h;
    if (r.body.contentType) headers["content-type"] = r.body.contentType;
    if (r.idem.kind === "bad") {
      headers["idempotency-key"] = r.idem.k;
      invalid.push("bad Idempotency-Key");
    } else if (r.idem.kind === "fresh") {
      headers["idempotency-key"] = r.idem.k;
    } else if (r.idem.kind === "shared" && invalid.length === 0) {
      headers["idempotency-key"] =
        world.sharedIdempotencyKeys[r.idem.i % world.sharedIdempotencyKeys.length + SHARED];
    }
    if (r.requestId !== undefined) headers["x-request-id"] = r.requestId;
    headers["x-forwarded-for"] = r.forwardedFor;
    if (r.accept) headers.accept = r.accept;
    const query = qs.toString();
    return {
      method: op.method,
      url: `${base}${path}${query ? `?${query}` : ""}`,
      headers,
      body: r.body.body,
      invalid: invalid.length > 0 ? invalid.join(", ") : null,
      requestId: r.requestId,
    };
  });
}
