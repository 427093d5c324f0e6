/**
 * fast-check arbitraries derived from the service's own OpenAPI document: values that satisfy a
 * JSON schema (`validValue`), values that certainly violate it (`invalidValue`), and a lenient
 * conformance check for 2xx bodies (`conforms`). Only the subset of JSON Schema that zod-openapi
 * emits for this service is understood; anything else is treated permissively.
 */
import fc from "fast-check";

// deno-lint-ignore no-explicit-any
export type Schema = any;
// deno-lint-ignore no-explicit-any
export type Doc = any;

export function deref(doc: Doc, s: Schema): Schema {
  let cur = s;
  while (cur && typeof cur === "object" && typeof cur.$ref === "string") {
    const path = cur.$ref.replace(/^#\//, "").split("/");
    cur = path.reduce((o: Schema, k: string) => o?.[k], doc);
  }
  return cur ?? {};
}

const ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const alnum = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...ALNUM.split("")), minLength: min, maxLength: max });

/** Strings that stress encoders: unicode, control characters, quotes, RTL, surrogates. */
export const nastyString = (min = 0, max = 40): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ unit: "grapheme", minLength: min, maxLength: max }),
    fc.string({ unit: "binary", minLength: min, maxLength: max }),
    fc.constantFrom(
      "\u0000",
      "\r\nX-Injected: 1",
      "../../etc/passwd",
      "<script>alert(1)</script>",
      "'; DROP TABLE x; --",
      "\u202eevil",
      "\ud800",
      "%00%0d%0a",
      "${jndi:ldap://x}",
      "__proto__",
      "constructor",
    ).filter((s) => s.length >= min && s.length <= max),
  );

function validEmail(max: number): fc.Arbitrary<string> {
  return fc.tuple(alnum(1, 20), alnum(1, 15), fc.constantFrom("com", "io", "example", "dev"))
    .map(([l, d, t]) => `${l.toLowerCase()}@${d.toLowerCase()}.${t}`)
    .filter((e) => e.length <= max);
}

function validUrl(max: number, https = false): fc.Arbitrary<string> {
  return fc.tuple(
    https ? fc.constant("https") : fc.constantFrom("http", "https", "HTTPS"),
    alnum(1, 12),
    fc.constantFrom("example.com", "example.org", "hooks.example.com"),
    fc.array(alnum(1, 10), { maxLength: 3 }),
    fc.option(alnum(1, 8), { nil: undefined }),
  ).map(([scheme, sub, host, path, q]) =>
    `${scheme}://${sub.toLowerCase()}.${host}/${path.join("/")}${q ? `?q=${q}` : ""}`
  ).filter((u) => u.length <= max);
}

/**
 * A value valid against `schema`. `name` is the property name, used for the formats the document
 * does not spell out (emails, URLs) and for id pools (`ids` maps a property name to known ids).
 */
export function validValue(
  doc: Doc,
  schema: Schema,
  name = "",
  ids: Record<string, () => string[]> = {},
): fc.Arbitrary<unknown> {
  const s = deref(doc, schema);
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.const !== undefined) return fc.constant(s.const);
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== "null") : s.type;
  switch (type) {
    case "string": {
      const min = s.minLength ?? 0;
      const max = Math.min(s.maxLength ?? 300, 300);
      const pool = ids[name];
      if (pool) {
        return fc.oneof(
          { weight: 4, arbitrary: fc.nat().map((i) => pickAt(pool(), i)) },
          { weight: 1, arbitrary: alnum(Math.max(min, 1), Math.min(max, 40)) },
        ).map((v) => v ?? "proj_missing");
      }
      if (s.format === "email" || name === "email") return validEmail(max);
      if (s.format === "uri" || name === "url") return validUrl(max, name === "url" && !!s.https);
      if (s.pattern === "^[A-Za-z0-9-]+$") return alnum(Math.max(min, 1), max);
      if (s.pattern) {
        return fc.stringMatching(new RegExp(s.pattern)).filter((v) =>
          v.length >= min && v.length <= max
        );
      }
      // Trimmed fields (topic, keyword) must keep their minimum after trimming.
      return fc.oneof(
        { weight: 3, arbitrary: alnum(Math.max(min, 1), max) },
        {
          weight: 2,
          arbitrary: fc.string({ unit: "grapheme", minLength: min, maxLength: max })
            .filter((v) => v.trim().length >= min && v.length <= max),
        },
      );
    }
    case "integer":
      return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1_000_000 });
    case "number":
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(validValue(doc, s.items ?? {}, name, ids), {
        minLength: s.minItems ?? 0,
        maxLength: Math.min(s.maxItems ?? 5, 8),
      });
    case "object": {
      const props: Record<string, Schema> = s.properties ?? {};
      const required: string[] = s.required ?? [];
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) record[k] = validValue(doc, v, k, ids);
      return fc.record(record, { requiredKeys: required });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Values of the wrong JSON type for `s`. */
function wrongType(s: Schema): fc.Arbitrary<unknown> {
  const type = Array.isArray(s.type) ? s.type : [s.type];
  const all: [string, fc.Arbitrary<unknown>][] = [
    ["string", fc.string({ maxLength: 10 })],
    ["number", fc.oneof(fc.integer(), fc.double({ noNaN: true }))],
    ["integer", fc.integer()],
    ["boolean", fc.boolean()],
    ["null", fc.constant(null)],
    ["object", fc.dictionary(alnum(1, 5), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 })],
    ["array", fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 })],
  ];
  const other = all.filter(([t]) =>
    !type.includes(t) && !(t === "integer" && type.includes("number")) &&
    !(t === "number" && type.includes("integer"))
  ).map(([, a]) => a);
  return fc.oneof(...other);
}

/**
 * A value that certainly violates `schema` (for the subset used here): a wrong type, a string
 * out of its length bounds or outside its enum, an object missing a required key or carrying an
 * unknown one (every request body here is `additionalProperties: false`).
 */
export function invalidValue(doc: Doc, schema: Schema, name = ""): fc.Arbitrary<unknown> {
  const s = deref(doc, schema);
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== "null") : s.type;
  const options: fc.Arbitrary<unknown>[] = [wrongType(s)];
  if (type === "string") {
    if (s.enum) {
      options.push(alnum(0, 12).filter((v) => !s.enum.includes(v)));
      options.push(fc.constantFrom(...s.enum).map((v: string) => v.toUpperCase() + " "));
    }
    if (s.minLength && s.minLength > 0) options.push(fc.constant("x".repeat(s.minLength - 1)));
    if (s.maxLength !== undefined) {
      options.push(fc.integer({ min: 1, max: 2000 }).map((n) => "x".repeat(s.maxLength + n)));
    }
    if (s.pattern === "^[A-Za-z0-9-]+$") {
      options.push(fc.constantFrom("e n", "en_US", "en/US", "é+"));
    }
    if (name === "email") {
      options.push(fc.constantFrom("not-an-email", "a@", "@b.co", "a b@c.de", "a@b"));
    }
  }
  if (type === "array" && s.items) {
    options.push(
      fc.array(invalidValue(doc, s.items, name), { minLength: 1, maxLength: 3 }),
    );
    if (s.maxItems !== undefined) {
      const item = deref(doc, s.items);
      options.push(
        fc.constant(Array.from({ length: s.maxItems + 1 }, () => item.enum?.[0] ?? "x")),
      );
    }
  }
  if (type === "object") {
    const props: Record<string, Schema> = s.properties ?? {};
    const required: string[] = s.required ?? [];
    const base = validValue(doc, s) as fc.Arbitrary<Record<string, unknown>>;
    if (required.length > 0) {
      options.push(
        fc.tuple(base, fc.constantFrom(...required)).map(([o, k]) => {
          const c = { ...o };
          delete c[k];
          return c;
        }),
      );
    }
    if (s.additionalProperties === false) {
      options.push(
        fc.tuple(base, alnum(1, 12).filter((k) => !(k in props)), fc.jsonValue({ maxDepth: 1 }))
          .map(([o, k, v]) => ({ ...o, [k]: v })),
      );
    }
    const keys = Object.keys(props);
    if (keys.length > 0) {
      options.push(
        fc.tuple(base, fc.constantFrom(...keys)).chain(([o, k]) =>
          invalidValue(doc, props[k], k).map((bad) => ({ ...o, [k]: bad }))
        ),
      );
    }
  }
  return fc.oneof(...options);
}

/**
 * Lenient structural check of a response body against a schema: types, required keys, enums,
 * array items. Returns a description of the first mismatch, or null.
 */
export function conforms(doc: Doc, schema: Schema, value: unknown, at = "$"): string | null {
  const s = deref(doc, schema);
  if (!s || typeof s !== "object" || Object.keys(s).length === 0) return null;
  for (const key of ["anyOf", "oneOf"]) {
    if (Array.isArray(s[key])) {
      return s[key].some((alt: Schema) => conforms(doc, alt, value, at) === null)
        ? null
        : `${at}: matches no ${key} alternative`;
    }
  }
  if (Array.isArray(s.allOf)) {
    for (const part of s.allOf) {
      const bad = conforms(doc, part, value, at);
      if (bad) return bad;
    }
  }
  if (s.enum && !s.enum.includes(value)) return `${at}: ${JSON.stringify(value)} not in enum`;
  if (s.const !== undefined && s.const !== value) return `${at}: expected ${s.const}`;
  const types: string[] = s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
  if (s.nullable) types.push("null");
  if (types.length > 0 && !types.some((t) => typeOk(t, value))) {
    return `${at}: expected ${types.join("|")}, got ${JSON.stringify(value)?.slice(0, 60)}`;
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    for (const k of s.required ?? []) if (!(k in o)) return `${at}.${k}: missing`;
    for (const [k, sub] of Object.entries(s.properties ?? {})) {
      if (k in o) {
        const bad = conforms(doc, sub, o[k], `${at}.${k}`);
        if (bad) return bad;
      }
    }
  }
  if (Array.isArray(value) && s.items) {
    for (let i = 0; i < value.length; i++) {
      const bad = conforms(doc, s.items, value[i], `${at}[${i}]`);
      if (bad) return bad;
    }
  }
  return null;
}

function typeOk(t: string, v: unknown): boolean {
  switch (t) {
    case "null":
      return v === null;
    case "string":
      return typeof v === "string";
    case "integer":
      return typeof v === "number" && Number.isInteger(v);
    case "number":
      return typeof v === "number";
    case "boolean":
      return typeof v === "boolean";
    case "array":
      return Array.isArray(v);
    case "object":
      return v !== null && typeof v === "object" && !Array.isArray(v);
    default:
      return true;
  }
}

/** The `i`-th element modulo the pool's size (deterministic under a fast-check seed). */
export function pickAt<T>(xs: T[], i: number): T | null {
  return xs.length === 0 ? null : xs[i % xs.length];
}
