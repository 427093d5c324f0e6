/**
 * Deno KV's size and count limits, checked before the store sees a write. A write past a limit
 * is rejected by KV itself, but only when it is committed, often far from the code that built it
 * (a batched commit, a step's last commit); the tests therefore run every KV through this guard in
 * strict mode, so a violation fails at once with the limit and the key prefix in its message.
 *
 * The limits are the strictest of the backends the service runs on: self-hosted denokv allows 10
 * checks per atomic operation (the local SQLite backend 100), and every backend allows 1,000
 * mutations and 800 KiB per commit, 80 KiB of keys per commit, 2 KiB per key, 64 KiB per value
 * and 10 keys per read.
 *
 * Sizes are upper bounds, never under-estimates: a key is measured as KV encodes it (UTF-8, with
 * a tag and a terminator per part); a value as V8's serializer writes it, where a string may take
 * two bytes per UTF-16 unit even when it is ASCII (a slice of a non-Latin-1 string keeps the
 * parent's two-byte form: an 33,000-character ASCII slice is a rejected value), so every string
 * counts two bytes per unit.
 *
 * @example
 * ```ts
 * const kv = withKvLimits(await Deno.openKv(":memory:"), { strict: true });
 * await kv.atomic().set(["big"], "x".repeat(40_000)).commit(); // rejects: value_bytes
 * ```
 *
 * @module
 */

/** The limits the guard enforces (bytes are encoded sizes). */
export const KV_LIMITS = {
  /** Checks per atomic operation (self-hosted denokv; the SQLite backend allows 100). */
  checks: 10,
  /** Mutations (set, delete, sum, min, max, enqueue) per atomic operation. */
  mutations: 1_000,
  /** Keys and values of one commit together. */
  totalBytes: 800 * 1024,
  /** Keys of one commit together. */
  totalKeyBytes: 80 * 1024,
  /** One encoded key. */
  keyBytes: 2_048,
  /** One serialized value. */
  valueBytes: 64 * 1024,
  /** Keys per `getMany` / `watch`. */
  readKeys: 10,
} as const;

/** Which limit a write or read passed. */
export type KvLimitName = keyof typeof KV_LIMITS;

/** One limit passed: what, by how much, and where (the first parts of the key). */
export interface KvLimitViolation {
  limit: KvLimitName;
  actual: number;
  max: number;
  /** The first two parts of the offending key (or of the operation's first key), clipped. */
  keyPrefix: string;
  /** `atomic.commit`, `set`, `get`, `getMany`, `delete`, `list`, `enqueue`, `watch`. */
  operation: string;
}

/** A KV operation the guard refused (strict mode). */
export class KvLimitError extends Error {
  constructor(readonly violation: KvLimitViolation) {
    const v = violation;
    super(
      `KV limit ${v.limit} exceeded in ${v.operation}: ${v.actual} > ${v.max} ` +
        `(key ${v.keyPrefix})`,
    );
    this.name = "KvLimitError";
  }
}

export interface KvLimitsOptions {
  /**
   * Refuse a violating operation with a `KvLimitError` (the promise rejects; nothing is written).
   * Off: report it and pass the operation on to the store, which decides. Default off.
   */
  strict?: boolean;
  /**
   * Told of every violation, in both modes (default: a JSON `warn` line on stderr when not strict,
   * nothing when strict, where the error says it).
   */
  onViolation?: (v: KvLimitViolation) => void;
}

/** UTF-8 length of a string without allocating. */
function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

function zeroBytes(s: string): number {
  let n = 0;
  for (let i = s.indexOf("\0"); i !== -1; i = s.indexOf("\0", i + 1)) n++;
  return n;
}

/**
 * The encoded size of a key as KV stores it: per part a tag byte, then a string's UTF-8 bytes or
 * a byte array's bytes (a zero byte escaped to two) and a terminator, a number's 8 bytes, a
 * bigint's bytes and a length, a boolean's tag alone.
 */
export function keyBytes(key: Deno.KvKey): number {
  let n = 0;
  for (const part of key) {
    if (typeof part === "string") n += 2 + utf8Length(part) + zeroBytes(part);
    else if (typeof part === "number") n += 9;
    else if (typeof part === "bigint") {
      n += 3 + Math.ceil((part < 0n ? -part : part).toString(16).length / 2);
    } else if (typeof part === "boolean") n += 1;
    else if (part instanceof Uint8Array) {
      let zeros = 0;
      for (const b of part) if (b === 0) zeros++;
      n += 2 + part.byteLength + zeros;
    } else n += 2 + utf8Length(String(part));
  }
  return n;
}

/**
 * An upper bound of a value's serialized size: a top-level `Uint8Array` is stored as its bytes,
 * a `Deno.KvU64` as 8 bytes, anything else as V8's structured serialization writes it (strings
 * two bytes per UTF-16 unit, numbers 9 bytes, typed arrays their whole buffer, shared objects
 * counted each time they occur).
 */
export function valueBytes(value: unknown): number {
  if (value instanceof Uint8Array && value.constructor === Uint8Array) return value.byteLength;
  if (value instanceof Deno.KvU64) return 8;
  ancestors.length = 0; // a walk that threw (a getter) left its stack
  return 4 + serializedBytes(value);
}

/**
 * The objects the walk is inside, outermost first: one met again is a cycle, written as a
 * back-reference. A stack searched in full, not a set: values are a few levels deep, and a
 * set per value cost the crawl more than the walk itself (~14 values a page).
 */
const ancestors: object[] = [];

function serializedBytes(v: unknown): number {
  switch (typeof v) {
    case "string":
      return 7 + 2 * v.length; // tag, length varint, padding, two-byte form
    case "number":
      return 9;
    case "boolean":
    case "undefined":
      return 1;
    case "bigint":
      return 6 + Math.ceil(v.toString(16).length / 2);
    case "symbol":
    case "function":
      return 1; // not serializable; KV itself rejects it
  }
  if (v === null) return 1;
  const o = v as object;
  if (ancestors.includes(o)) return 6; // a back-reference
  if (ArrayBuffer.isView(o)) return 24 + o.buffer.byteLength; // the whole buffer is written
  if (o instanceof ArrayBuffer) return 6 + o.byteLength;
  if (o instanceof Date) return 9;
  if (o instanceof RegExp) return 12 + 2 * o.source.length;
  if (o instanceof Deno.KvU64) return 16;
  ancestors.push(o);
  let n = 12;
  if (Array.isArray(o)) {
    // Indexed, not for-of: this function recurses, so V8 cannot elide an array iterator, and one
    // per array walked was ~6% of what a crawl allocated. A hole counts as `undefined`.
    for (let i = 0; i < o.length; i++) n += serializedBytes(o[i]);
  } else if (o instanceof Map) {
    for (const [k, x] of o) n += serializedBytes(k) + serializedBytes(x);
  } else if (o instanceof Set) {
    for (const x of o) n += serializedBytes(x);
  } else {
    for (const k in o) {
      if (!Object.hasOwn(o, k)) continue;
      n += 7 + 2 * k.length + serializedBytes((o as Record<string, unknown>)[k]);
    }
  }
  ancestors.pop();
  return n;
}

/** The first two parts of a key, strings clipped, for messages. */
export function keyPrefix(key: Deno.KvKey | undefined): string {
  if (!key) return "[]";
  const parts = key.slice(0, 2).map((p) => {
    if (typeof p === "string") return JSON.stringify(p.length > 40 ? p.slice(0, 40) + "…" : p);
    if (p instanceof Uint8Array) return `bytes(${p.byteLength})`;
    return String(p);
  });
  return `[${parts.join(",")}${key.length > 2 ? ",…" : ""}]`;
}

/** What one atomic operation holds so far. */
class Tally {
  checks = 0;
  mutations = 0;
  totalBytes = 0;
  totalKeyBytes = 0;
  firstKey: Deno.KvKey | undefined;
  /** The first per-key or per-value violation met while building. */
  violation: KvLimitViolation | null = null;

  key(key: Deno.KvKey): void {
    this.firstKey ??= key;
    const kb = keyBytes(key);
    this.totalKeyBytes += kb;
    this.totalBytes += kb;
    if (kb > KV_LIMITS.keyBytes) this.note("keyBytes", kb, key);
  }

  value(key: Deno.KvKey | undefined, value: unknown): void {
    const vb = valueBytes(value);
    this.totalBytes += vb;
    if (vb > KV_LIMITS.valueBytes) this.note("valueBytes", vb, key);
  }

  private note(limit: KvLimitName, actual: number, key: Deno.KvKey | undefined): void {
    this.violation ??= {
      limit,
      actual,
      max: KV_LIMITS[limit],
      keyPrefix: keyPrefix(key),
      operation: "atomic.commit",
    };
  }

  /** The first limit passed, or null. */
  verdict(): KvLimitViolation | null {
    if (this.violation) return this.violation;
    const over = (limit: KvLimitName, actual: number): KvLimitViolation | null =>
      actual > KV_LIMITS[limit]
        ? {
          limit,
          actual,
          max: KV_LIMITS[limit],
          keyPrefix: keyPrefix(this.firstKey),
          operation: "atomic.commit",
        }
        : null;
    return over("checks", this.checks) ?? over("mutations", this.mutations) ??
      over("totalKeyBytes", this.totalKeyBytes) ?? over("totalBytes", this.totalBytes);
  }
}

function defaultReport(v: KvLimitViolation): void {
  console.error(JSON.stringify({ level: "warn", msg: "KV limit exceeded", ...v }));
}

/**
 * The same KV with every atomic operation checked at `commit()` against KV_LIMITS, and `set`,
 * `delete`, `enqueue`, `get`, `getMany`, `list` and `watch` checked on the call. Composes with
 * `withBusyRetry` either way round (`withBusyRetry(withKvLimits(raw))` checks each attempt).
 */
export function withKvLimits(kv: Deno.Kv, options: KvLimitsOptions = {}): Deno.Kv {
  const strict = options.strict ?? false;
  const report = options.onViolation ?? (strict ? () => {} : defaultReport);
  /** Reports; in strict mode returns the error to reject with. */
  const refuse = (v: KvLimitViolation | null): KvLimitError | null => {
    if (!v) return null;
    report(v);
    return strict ? new KvLimitError(v) : null;
  };
  const one = (operation: string, key: Deno.KvKey, value?: { v: unknown }) => {
    const kb = keyBytes(key);
    const max = KV_LIMITS.keyBytes;
    if (kb > max) {
      return { limit: "keyBytes" as const, actual: kb, max, keyPrefix: keyPrefix(key), operation };
    }
    if (value) {
      const vb = valueBytes(value.v);
      if (vb > KV_LIMITS.valueBytes) {
        return {
          limit: "valueBytes" as const,
          actual: vb,
          max: KV_LIMITS.valueBytes,
          keyPrefix: keyPrefix(key),
          operation,
        };
      }
    }
    return null;
  };
  const many = (operation: string, keyList: readonly Deno.KvKey[]): KvLimitViolation | null => {
    if (keyList.length > KV_LIMITS.readKeys) {
      return {
        limit: "readKeys",
        actual: keyList.length,
        max: KV_LIMITS.readKeys,
        keyPrefix: keyPrefix(keyList[0]),
        operation,
      };
    }
    for (const k of keyList) {
      const v = one(operation, k);
      if (v) return v;
    }
    return null;
  };
  const selectorKeys = (s: Deno.KvListSelector): Deno.KvKey[] =>
    ["prefix", "start", "end"].flatMap((p) => {
      const k = (s as Record<string, Deno.KvKey | undefined>)[p];
      return k ? [k] : [];
    });

  return new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const call = (args: unknown[]) => value.apply(target, args);
      switch (prop) {
        case "atomic":
          return () => guardedOperation(target.atomic(), refuse);
        case "set":
          return (key: Deno.KvKey, v: unknown, ...rest: unknown[]) => {
            const err = refuse(one("set", key, { v }));
            return err ? Promise.reject(err) : call([key, v, ...rest]);
          };
        case "get":
        case "delete":
          return (key: Deno.KvKey, ...rest: unknown[]) => {
            const err = refuse(one(String(prop), key));
            return err ? Promise.reject(err) : call([key, ...rest]);
          };
        case "getMany":
          return (keyList: Deno.KvKey[], ...rest: unknown[]) => {
            const err = refuse(many("getMany", keyList));
            return err ? Promise.reject(err) : call([keyList, ...rest]);
          };
        case "enqueue":
          return (v: unknown, opts?: { keysIfUndelivered?: Deno.KvKey[] }) => {
            let viol: KvLimitViolation | null = null;
            const vb = valueBytes(v);
            if (vb > KV_LIMITS.valueBytes) {
              viol = {
                limit: "valueBytes",
                actual: vb,
                max: KV_LIMITS.valueBytes,
                keyPrefix: keyPrefix(opts?.keysIfUndelivered?.[0]),
                operation: "enqueue",
              };
            }
            for (const k of opts?.keysIfUndelivered ?? []) viol ??= one("enqueue", k);
            const err = refuse(viol);
            return err ? Promise.reject(err) : call(opts === undefined ? [v] : [v, opts]);
          };
        case "list":
          return (selector: Deno.KvListSelector, ...rest: unknown[]) => {
            const err = refuse(many("list", selectorKeys(selector)));
            if (err) throw err; // list returns an iterator, not a promise
            return call([selector, ...rest]);
          };
        case "watch":
          return (keyList: Deno.KvKey[], ...rest: unknown[]) => {
            const err = refuse(many("watch", keyList));
            if (err) throw err;
            return call([keyList, ...rest]);
          };
      }
      return value.bind(target);
    },
  });
}

/** An atomic operation that tallies what it holds and checks the tally at `commit()`. */
function guardedOperation(
  op: Deno.AtomicOperation,
  refuse: (v: KvLimitViolation | null) => KvLimitError | null,
): Deno.AtomicOperation {
  const t = new Tally();
  const record = (prop: PropertyKey, args: unknown[]): void => {
    switch (prop) {
      case "check":
        for (const c of args as Deno.AtomicCheck[]) {
          t.checks++;
          t.key(c.key);
        }
        return;
      case "mutate":
        for (const m of args as Deno.KvMutation[]) {
          t.mutations++;
          t.key(m.key);
          if (m.type !== "delete") t.value(m.key, m.value);
        }
        return;
      case "set":
        t.mutations++;
        t.key(args[0] as Deno.KvKey);
        t.value(args[0] as Deno.KvKey, args[1]);
        return;
      case "sum":
      case "min":
      case "max":
        t.mutations++;
        t.key(args[0] as Deno.KvKey);
        t.totalBytes += 8;
        return;
      case "delete":
        t.mutations++;
        t.key(args[0] as Deno.KvKey);
        return;
      case "enqueue": {
        t.mutations++;
        const opts = args[1] as { keysIfUndelivered?: Deno.KvKey[] } | undefined;
        t.value(opts?.keysIfUndelivered?.[0], args[0]);
        for (const k of opts?.keysIfUndelivered ?? []) t.key(k);
        return;
      }
    }
  };
  const wrapper: Deno.AtomicOperation = new Proxy(op, {
    get(target, prop) {
      if (prop === "commit") {
        return () => {
          const err = refuse(t.verdict());
          return err ? Promise.reject(err) : target.commit();
        };
      }
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        record(prop, args);
        const out = value.apply(target, args);
        return out === target ? wrapper : out;
      };
    },
  });
  return wrapper;
}
