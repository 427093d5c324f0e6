/**
 * Kept-alive connections for `safeFetch`, for a caller that makes many requests to one site in a
 * short time (a crawl step): a new TCP connection per request cost the crawl more CPU than parsing
 * its pages. A connection is only ever reused for a request whose address guard check pinned the
 * very address it was opened to: there is one `node:http` agent per (protocol, checked address,
 * port, TLS server name, CA), and that agent can only connect to its own address. A host whose
 * DNS answer changes therefore gets a new connection to the newly checked address, never a pooled
 * one (DNS rebinding stays shut out, as for one-shot requests).
 *
 * Bounded three ways: at most MAX_AGENTS agents (the least recently used idle one is closed to
 * make room; when all are busy the request goes one-shot), at most `socketsPerAgent` connections
 * each, and an idle connection is closed after IDLE_MS. The owner closes the pool when done (a
 * crawl step does, in `finally`), which ends every connection: nothing outlives its step.
 *
 * @example
 * ```ts
 * import { ConnectionPool, safeFetch } from "./mod.ts";
 * const pool = new ConnectionPool();
 * try {
 *   await safeFetch("https://example.com/a", { allowPrivate: false, pool });
 *   await safeFetch("https://example.com/b", { allowPrivate: false, pool }); // same connection
 * } finally {
 *   pool.close();
 * }
 * ```
 *
 * @module
 */
import http from "node:http";
import https from "node:https";

/** Agents (distinct pinned targets) a pool keeps at most. */
export const MAX_AGENTS = 64;
/** An idle kept-alive connection is closed after this long, ms. */
export const IDLE_MS = 4_000;
const DEFAULT_SOCKETS_PER_AGENT = 16;

/** What a pooled connection is opened to: it is reused only for the same. */
export interface PoolTarget {
  https: boolean;
  /** The address the guard checked (and the connection goes to). */
  address: string;
  port: number;
  /** TLS server name (SNI), if any. */
  servername?: string;
  /** Extra trusted CA (PEM), if any. */
  ca?: string;
}

type Lookup = (host: string, o: { all?: boolean }, cb: (...args: unknown[]) => void) => void;

/** A `lookup` that answers `address` whatever it is asked: the connection goes where the guard checked. */
export function pinnedLookup(address: string): Lookup {
  const family = address.includes(":") ? 6 : 4;
  return (_host, o, cb) => {
    if (o && o.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  };
}

/** Kept-alive connections of one owner (see the module comment). */
export class ConnectionPool {
  /** Insertion order is recency: a use moves the agent to the end. */
  private readonly agents = new Map<string, http.Agent>();
  private closed = false;

  constructor(private readonly socketsPerAgent = DEFAULT_SOCKETS_PER_AGENT) {}

  /**
   * The agent for `t`, created on first use; null when the pool is closed or every one of its
   * MAX_AGENTS agents is busy (the caller then goes one-shot).
   */
  agentFor(t: PoolTarget): http.Agent | null {
    if (this.closed) return null;
    const key = JSON.stringify([t.https, t.address, t.port, t.servername ?? "", t.ca ?? ""]);
    const known = this.agents.get(key);
    if (known) {
      this.agents.delete(key);
      this.agents.set(key, known);
      return known;
    }
    if (this.agents.size >= MAX_AGENTS && !this.evictIdle()) return null;
    const Agent = t.https ? https.Agent : http.Agent;
    const agent = new Agent({
      keepAlive: true,
      maxSockets: this.socketsPerAgent,
      maxFreeSockets: this.socketsPerAgent,
      // Node's agent applies this to free sockets only: an idle one is destroyed, a request
      // in flight is bounded by safeFetch's own deadline.
      timeout: IDLE_MS,
      scheduling: "lifo",
      // The agent's options override the request's: this agent can only reach its address.
      lookup: pinnedLookup(t.address),
    } as http.AgentOptions);
    this.agents.set(key, agent);
    return agent;
  }

  /** Closes the least recently used agent with no request in flight; false if all are busy. */
  private evictIdle(): boolean {
    for (const [key, agent] of this.agents) {
      if (Object.values(agent.sockets).every((s) => !s || s.length === 0)) {
        this.agents.delete(key);
        agent.destroy();
        return true;
      }
    }
    return false;
  }

  /** Agents held (for tests and the bound). */
  get size(): number {
    return this.agents.size;
  }

  /** Ends every connection; later requests through this pool go one-shot. */
  close(): void {
    this.closed = true;
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  /** `close`, for `using`: a pool held for a block is closed however the block ends. */
  [Symbol.dispose](): void {
    this.close();
  }
}
