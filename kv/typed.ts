/**
 * Typed keys and the reads and writes that take their value type from the key.
 *
 * A key built by the store schema (domain/platform/store.ts) carries the type of the value stored under it
 * as a phantom brand: `Key<T>` for one entry, `Prefix<T>` for a prefix whose entries all hold a
 * `T`. The brand exists only for the type checker (a key is still a plain `Deno.KvKey` array at
 * run time), and it is optional, so a raw key is still accepted where a typed one is expected: it
 * just reads as `unknown`, never as a type nobody declared.
 *
 * `read`, `readMany` and `list` are `kv.get`, `kv.getMany` and `kv.list` whose value type is
 * inferred from the key instead of written at each call; `atomic` is `kv.atomic()` whose `set`
 * only accepts the value type of a typed key. Checks, deletes, `sum`/`max` and `commit` are
 * Deno's own.
 *
 * @example
 * ```ts
 * import { keys } from "../domain/platform/store.ts";
 * declare const kv: Deno.Kv, id: string, a: string, p: string, name: string;
 * const entry = await read(kv, keys.account(id)); // Deno.KvEntryMaybe<AccountRecord>
 * const [project, sub] = await readMany(kv, [keys.project(a, p), keys.subscription(p)]);
 * for await (const e of list(kv, { prefix: keys.projectsOfAccount(a) })) e.value.name;
 * await atomic(kv).check(entry).set(entry.key, { ...entry.value!, companyName: name }).commit();
 * ```
 *
 * @module
 */

declare const VALUE: unique symbol;
declare const ITEM: unique symbol;

/** A key whose entry holds a `T`. */
export type Key<T> = Deno.KvKey & KeyOf<T>;
/** The brand alone, intersected onto a builder's literal tuple type (domain/platform/store.ts). */
export interface KeyOf<T> {
  readonly [VALUE]?: T;
}

/** A prefix under which every entry holds a `T`, under a key of shape `K`. */
export type Prefix<T, K extends Deno.KvKey = Deno.KvKey> = Deno.KvKey & PrefixOf<T, K>;
export interface PrefixOf<T, K extends Deno.KvKey = Deno.KvKey> {
  readonly [ITEM]?: { readonly value: T; readonly key: K };
}

/** The value type a typed key carries (`unknown` for a raw key). */
export type ValueOf<K> = K extends { readonly [VALUE]?: infer T } ? unknown extends T ? unknown : T
  : unknown;

/** An entry read through a typed key; its `key` keeps the type, so a write back is checked. */
export type Entry<T> = Deno.KvEntryMaybe<T> & { readonly key: Key<T> };
/** A listed entry; its `key` is a key of the listed family, parts typed by their position. */
export type ListedEntry<T, K extends Deno.KvKey = Deno.KvKey> = Deno.KvEntry<T> & {
  readonly key: K & Key<T>;
};

/** `kv.get` with the value type of the key. */
export function read<T>(
  kv: Deno.Kv,
  key: Key<T>,
  consistency?: Deno.KvConsistencyLevel,
): Promise<Entry<T>> {
  return kv.get<T>(key, consistency ? { consistency } : undefined);
}

/** The entries `readMany` answers: one per key, each with its key's value type. */
export type Entries<K extends readonly Deno.KvKey[]> = {
  -readonly [I in keyof K]: Entry<ValueOf<K[I]>>;
};

/**
 * `kv.getMany` (at most 10 keys, one snapshot) with each entry typed by its key: a tuple of
 * keys gives a tuple of entries, an array of one family's keys an array of its entries. (One of
 * the module's two casts: `getMany`'s own result type cannot follow a mapped tuple of keys.)
 */
export function readMany<const K extends readonly Deno.KvKey[]>(
  kv: Deno.Kv,
  keyList: K,
  consistency?: Deno.KvConsistencyLevel,
): Promise<Entries<K>> {
  return kv.getMany(keyList, consistency ? { consistency } : undefined) as Promise<Entries<K>>;
}

/**
 * `readMany` for generic code over one family (`T` unknown where it is written): at most 10
 * keys, their entries in the same order.
 */
export function readAll<T>(
  kv: Deno.Kv,
  keyList: readonly Key<T>[],
  consistency?: Deno.KvConsistencyLevel,
): Promise<Entry<T>[]> {
  return kv.getMany<T[]>(keyList, consistency ? { consistency } : undefined);
}

/** What `list` walks: a typed prefix (optionally bounded), or a range between two typed keys. */
export type Selector<T, K extends Deno.KvKey> =
  | { prefix: Prefix<T, K> }
  | { prefix: Prefix<T, K>; start: Deno.KvKey }
  | { prefix: Prefix<T, K>; end: Deno.KvKey }
  | { start: K & Key<T>; end: K & Key<T> };

/** `kv.list`'s iterator, yielding entries of the selected family. */
export interface ListIterator<T, K extends Deno.KvKey = Deno.KvKey>
  extends AsyncIterableIterator<ListedEntry<T, K>> {
  readonly cursor: string;
}

/**
 * `kv.list` with the value type and key shape of the prefix's family (or of the range's keys).
 * The module's other cast: Deno types listed keys as any key, the schema knows their family.
 */
export function list<T, K extends Deno.KvKey = Deno.KvKey>(
  kv: Deno.Kv,
  selector: Selector<T, K>,
  options?: Deno.KvListOptions,
): ListIterator<T, K> {
  return kv.list<T>(selector, options) as ListIterator<T, K>;
}

/**
 * An atomic operation whose `set` takes the value type of a typed key (a raw key takes any
 * value, as before). Everything else is `Deno.AtomicOperation`: the object is the one
 * `kv.atomic()` returns.
 */
export interface Atomic extends Deno.AtomicOperation {
  set<T>(key: Key<T>, value: NoInfer<T>, options?: { expireIn?: number }): this;
}

/** `kv.atomic()`, typed by the keys it writes. */
export function atomic(kv: Deno.Kv): Atomic {
  return kv.atomic();
}

/** `kv.set` with the value type of the key. */
export function write<T>(
  kv: Deno.Kv,
  key: Key<T>,
  value: NoInfer<T>,
  options?: { expireIn?: number },
): Promise<Deno.KvCommitResult> {
  return kv.set(key, value, options);
}

/**
 * What a key family is in a store schema (domain/platform/store.ts): a `record` (the truth of something,
 * with the `indexes` written in the same atomic operation as it), an `index` pointing at entries
 * of the family `of`, any other single `value` (counters, markers, working state), or a `prefix`
 * listing the family `of`. `T` is the type of the value under each key; a prefix declares none,
 * it takes its family's (and the shape of its family's keys). Schemas are plain data, so a test
 * can check that indexes and records name each other.
 */
export interface Family<T, Role extends FamilyRole = FamilyRole> {
  readonly role: Role;
  /** A record's index families, each written in the same atomic operation as the record. */
  readonly indexes?: readonly string[];
  /** An index's record families (one, or several sharing it); a prefix's listed family. */
  readonly of?: readonly string[];
  readonly [VALUE]?: T;
}
export type FamilyRole = "record" | "index" | "value" | "prefix";

/**
 * The typed view of a layout (kv/keys.ts: an object of key builders) under a schema naming every
 * builder: each builder's key gets the brand of its family's value type. A layout object is
 * assignable to its typed view as it is (the brands are optional), so no cast is needed.
 */
export type TypedKeys<L, S extends { readonly [N in keyof L]: Family<unknown> }> = {
  readonly [N in keyof L]: L[N] extends (...args: infer A) => infer R
    ? S[N] extends { readonly role: "prefix"; readonly of: readonly [infer F extends keyof L] }
      ? (...args: A) => R & PrefixOf<FamilyValue<S[F]>, BuiltKey<L[F]>>
    : (...args: A) => R & KeyOf<FamilyValue<S[N]>>
    : never;
};

/** The value type a (non-prefix) schema entry declares. */
type FamilyValue<F> = F extends Family<infer T, Exclude<FamilyRole, "prefix">> ? T : never;
/** The key a builder makes. */
type BuiltKey<B> = B extends (...args: never[]) => infer K ? K extends Deno.KvKey ? K : never
  : never;
