/**
 * The last line of defence of the one process that serves every client: an error nothing
 * handled (a promise rejected with no handler, an exception thrown from a timer or an event
 * callback) would end the process, and with it every request and job in flight. Installed, such
 * an error is logged as one JSON line and the process goes on. It is not a way to handle errors:
 * each one logged here is a bug to fix where it started (a job's failure is its step's, retried
 * by the job runtime; a request's is rendered by the error handler).
 *
 * @module
 */

/** What the guard logs: one JSON line per escaped error (stderr by default). */
export type GuardLog = (line: string) => void;

let installed: (() => void) | null = null;

/** An error as a log field: name, message and the first frames of its stack. */
function describe(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    return {
      name: err.name,
      message: err.message,
      stack: err.stack?.split("\n").slice(1, 9).map((l) => l.trim()),
    };
  }
  let text: string;
  try {
    text = typeof err === "string" ? err : JSON.stringify(err) ?? String(err);
  } catch {
    text = String(err);
  }
  return { name: typeof err, message: text.slice(0, 2_000) };
}

/**
 * Keeps the process alive past unhandled promise rejections and uncaught exceptions, logging
 * each. Installing twice keeps the first installation. Returns a function that uninstalls it.
 *
 * @example
 * ```ts
 * if (import.meta.main) installProcessGuard();
 * ```
 */
export function installProcessGuard(log: GuardLog = (line) => console.error(line)): () => void {
  if (installed) return installed;
  const write = (msg: string, err: unknown) => {
    try {
      log(
        JSON.stringify({ level: "error", msg, at: new Date().toISOString(), error: describe(err) }),
      );
    } catch {
      // Logging must never be what ends the process.
    }
  };
  const onRejection = (e: PromiseRejectionEvent) => {
    e.preventDefault();
    write("unhandled promise rejection", e.reason);
  };
  const onError = (e: ErrorEvent) => {
    e.preventDefault();
    write("uncaught exception", e.error ?? e.message);
  };
  globalThis.addEventListener("unhandledrejection", onRejection);
  globalThis.addEventListener("error", onError);
  installed = () => {
    globalThis.removeEventListener("unhandledrejection", onRejection);
    globalThis.removeEventListener("error", onError);
    installed = null;
  };
  return installed;
}
