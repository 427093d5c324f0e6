/**
 * The broken link targets the link pass reports on (broken_internal_links), by URL hash: failed
 * fetches and error statuses that do not redirect (the records pass), and redirects that end in
 * one (redirects.ts, as aliases of their end). Redirecting targets (internal_redirect_links) are
 * redirects.ts's table.
 *
 * Memory: 20 bytes of hash index (hash_index.ts), 2 for the status and 2 for the failure kind
 * per broken URL, the same plus 4 per redirect ending broken, in typed arrays; the URL strings
 * are in KV (url_names.ts).
 *
 * @example
 * ```ts
 * import { urlHash } from "../store.ts";
 * const broken = new BrokenTargets();
 * broken.add(urlHash("https://a.test/gone"), 404, null);
 * broken.get(urlHash("https://a.test/gone")); // { status: 404, failure: null }
 * ```
 *
 * @module
 */
import { grown } from "../sorted_hashes.ts";
import { HashIndex } from "./hash_index.ts";

/** A broken target's answer: its status (0 when the fetch failed) and failure kind. */
export interface BrokenTarget {
  status: number;
  failure: string | null;
}

/**
 * Failure kinds (timeout, dns, tls, ...) as small numbers: a fixed vocabulary, held once. Code 0
 * is "no failure".
 */
export class FailureKinds {
  #kinds: (string | null)[] = [null];
  #codes = new Map<string, number>();

  code(failure: string | null): number {
    if (failure === null) return 0;
    let c = this.#codes.get(failure);
    if (c === undefined) {
      c = this.#kinds.push(failure) - 1;
      this.#codes.set(failure, c);
    }
    return c;
  }

  of(code: number): string | null {
    return this.#kinds[code];
  }
}

/** Broken link targets by URL hash. */
export class BrokenTargets {
  readonly #index = new HashIndex();
  #status = new Uint16Array(256);
  #failure = new Uint16Array(256);
  readonly #kinds = new FailureKinds();
  readonly #aliases = new HashIndex();
  #aliasOf = new Int32Array(256);

  /** A broken URL (the records pass; before any lookup). */
  add(hash: number, status: number, failure: string | null): void {
    const i = this.#index.push(hash);
    this.#status = grown(this.#status, i + 1);
    this.#failure = grown(this.#failure, i + 1);
    this.#status[i] = status;
    this.#failure[i] = this.#kinds.code(failure);
  }

  /**
   * A URL broken as `of` is (a redirect ending there); every alias comes before the first
   * lookup of an alias, after the URLs added.
   */
  alias(hash: number, of: number): void {
    const i = this.#aliases.push(hash);
    this.#aliasOf = grown(this.#aliasOf, i + 1);
    this.#aliasOf[i] = this.#index.indexOf(of);
  }

  #slot(hash: number): number {
    const i = this.#index.indexOf(hash);
    if (i >= 0 || this.#aliases.size === 0) return i;
    const a = this.#aliases.indexOf(hash);
    return a < 0 ? -1 : this.#aliasOf[a];
  }

  /** Whether the URL is broken itself, aliases aside (no lookup of an alias: they may follow). */
  hasOwn(hash: number): boolean {
    return this.#index.indexOf(hash) >= 0;
  }

  /** The broken target's answer, or undefined. */
  get(hash: number): BrokenTarget | undefined {
    const i = this.#slot(hash);
    if (i < 0) return undefined;
    return { status: this.#status[i], failure: this.#kinds.of(this.#failure[i]) };
  }
}
