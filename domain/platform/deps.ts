import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { Resolver } from "../net/types.ts";
import type { RenderService } from "../render/mod.ts";

/** Sends a job message; the KV record named by the message is the truth of the job. */
export interface JobQueue {
  enqueue(message: JobMessage, delayMs?: number): Promise<void>;
  /** Adds the message to the caller's atomic operation, so it is sent only if that commits. */
  enqueueIn(op: Deno.AtomicOperation, message: JobMessage, delayMs?: number): void;
  /**
   * Set where this process runs jobs from KV's native queue: runs a message just committed here
   * at once, not when the queue delivers it (tens to hundreds of ms later); the message stays the
   * fallback, and whichever claims the job first runs it.
   */
  kick?: (message: JobMessage) => void;
}

/** The typed envelope of every background job: "look at this record". */
export type JobMessage =
  | { type: "audit"; id: string }
  /** A helper of a partitioned crawl (id: `<auditId>:<k>`, domain/audit_engine/crawl/partition.ts). */
  | { type: "crawl_slice"; id: string }
  | { type: "article"; id: string }
  /** A re-check of one check of a completed audit (domain/rechecks/). */
  | { type: "recheck"; id: string }
  | { type: "outbox"; id: string }
  | { type: "delivery"; id: string }
  /** One attempt of an outbound mail (id: `mail_…:<attempt>`, domain/mail/). */
  | { type: "mail"; id: string }
  /** A project's audit schedule whose run is due (id: the project id). */
  | { type: "schedule"; id: string };

/** What domain functions need from the outside world, passed in rather than imported. */
export interface Deps {
  kv: Deno.Kv;
  clock: Clock;
  config: Config;
  queue: JobQueue;
  /** DNS for the address guard where the domain checks a target itself; tests set a fake. */
  resolver?: Resolver;
  /** The browser pool of rendered audits (started lazily); absent where nothing renders. */
  render?: RenderService;
  /**
   * This job-running process's id, written into the leases it takes: whoever sees the process
   * die (its supervisor) hands exactly its jobs back at once (domain/jobs/leases.ts).
   */
  worker?: string;
}
