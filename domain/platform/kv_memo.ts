/**
 * What this process remembers about a KV database's keys between steps, per database (a
 * process may hold several, e.g. in tests) and bounded: the oldest entry goes first once
 * `capacity` is reached. For values that save a round trip when known and are checked (or never
 * change) when used: a job's owner, a step's released record, the entries a step left queued.
 *
 * @example
 * ```ts
 * const owners = new KvMemo<string>(1_024);
 * declare const kv: Deno.Kv;
 * owners.set(kv, "audit:aud_1", "acc_1");
 * owners.get(kv, "audit:aud_1"); // "acc_1"
 * owners.take(kv, "audit:aud_1"); // "acc_1", and forgotten
 * ```
 *
 * @module
 */

/** Values by name, per KV database, at most `capacity` per database (oldest out first). */
export class KvMemo<T> {
  readonly #byKv = new WeakMap<Deno.Kv, Map<string, T>>();

  constructor(readonly capacity: number) {}

  /** The value kept for `name`, if any. */
  get(kv: Deno.Kv, name: string): T | undefined {
    return this.#byKv.get(kv)?.get(name);
  }

  /** The value kept for `name`, if any, forgotten as it is taken (it is used once). */
  take(kv: Deno.Kv, name: string): T | undefined {
    const kept = this.#byKv.get(kv);
    const value = kept?.get(name);
    kept?.delete(name);
    return value;
  }

  /** Keeps `value` for `name` as the newest entry, the oldest going when full. */
  set(kv: Deno.Kv, name: string, value: T): void {
    let kept = this.#byKv.get(kv);
    if (!kept) this.#byKv.set(kv, kept = new Map());
    kept.delete(name);
    if (kept.size >= this.capacity) kept.delete(kept.keys().next().value!);
    kept.set(name, value);
  }
}
