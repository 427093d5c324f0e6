/**
 * Held calls (the MCP `wait` of the audit and article tools), capped per API key
 * (`MCP_WAITS_PER_KEY`) and per process (`MCP_WAITS_PER_PROCESS`).
 *
 * @example
 * ```ts
 * const slots = new WaitSlots(5, 200);
 * const slot = slots.take("key_1");
 * if ("release" in slot) slot.release();
 * ```
 *
 * @module
 */

/** The `wait` calls one process holds, per API key and in all. */
export class WaitSlots {
  readonly #byKey = new Map<string, number>();
  #total = 0;

  constructor(readonly perKey: number, readonly perProcess: number) {}

  /** A slot for `keyId` (release it when the wait ends), or why there is none. */
  take(keyId: string): { release: () => void } | { refused: string } {
    if (this.perKey === 0 || this.perProcess === 0) {
      return { refused: "this server does not hold calls open" };
    }
    const mine = this.#byKey.get(keyId) ?? 0;
    if (mine >= this.perKey) {
      return {
        refused: `this API key already holds ${mine} waiting calls (at most ${this.perKey})`,
      };
    }
    if (this.#total >= this.perProcess) {
      return { refused: `the server holds its maximum of ${this.perProcess} waiting calls` };
    }
    this.#byKey.set(keyId, mine + 1);
    this.#total++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#total--;
        const left = (this.#byKey.get(keyId) ?? 1) - 1;
        if (left > 0) this.#byKey.set(keyId, left);
        else this.#byKey.delete(keyId);
      },
    };
  }

  /** Calls waiting now: all of them, or one key's. */
  running(keyId?: string): number {
    return keyId === undefined ? this.#total : this.#byKey.get(keyId) ?? 0;
  }
}
