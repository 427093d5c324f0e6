/**
 * The one way tests open a KV: Deno KV behind the limits guard in strict mode, so a write or read
 * past a KV limit (10 checks, 1,000 mutations, 800 KiB per commit, 2 KiB keys, 64 KiB values,
 * 10 keys per read) fails where it is made. Every violation is also printed on stderr with its
 * stack (a job runner that retries the failed step would otherwise hide it).
 */
import { type KvLimitViolation, withKvLimits } from "../../kv/limits_guard.ts";

/** Violations met by this test process, in order. */
export const kvViolations: KvLimitViolation[] = [];

function report(v: KvLimitViolation): void {
  kvViolations.push(v);
  const at = new Error().stack?.split("\n").slice(3, 12).join("\n") ?? "";
  console.error(`KV LIMIT VIOLATION ${JSON.stringify(v)}\n${at}`);
}

/** Wraps an open KV in the strict limits guard (for handles opened elsewhere, e.g. `openKv`). */
export function guardTestKv(kv: Deno.Kv): Deno.Kv {
  return withKvLimits(kv, { strict: true, onViolation: report });
}

/** Opens a KV (default in memory) behind the strict limits guard. */
export async function openTestKv(path = ":memory:"): Promise<Deno.Kv> {
  return guardTestKv(await Deno.openKv(path));
}
