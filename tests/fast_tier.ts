/**
 * The fast tier (`deno task test:fast`): every test file that starts no child process and no
 * browser, chosen by a rule rather than a list so it cannot drift. A file is left out when it, or
 * any test helper it imports (relative imports under `tests/`, followed transitively), names one
 * of `MARKERS` (a child process or a browser) or `APP_MARKERS` (the whole service started in
 * process, seconds each), or when it is in `SLOW` (measured slow). The run
 * itself denies `--allow-run`, so a fast-tier file that starts spawning fails the tier at once.
 *
 * `deno run -A tests/fast_tier.ts` runs the tier; `--list` prints the chosen files instead.
 *
 * @module
 */
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Text that means a file spawns a process or launches a browser, or imports what does. */
export const MARKERS: readonly string[] = [
  "Deno.Command",
  "Deno.run(",
  "Deno.execPath",
  "startProcess",
  "spawn",
  "chromium",
  "playwright",
  "BrowserPool",
  "renderPage",
  "RENDER_",
  "tests/proof/",
  "/proof/",
];

/**
 * Text that means a file starts the whole service in process (each such file costs seconds of
 * start-up): left to the full suite, so the tier stays under a minute on two cores.
 */
export const APP_MARKERS: readonly string[] = ["withApp", "startTestApp"];

/** Files that start neither but take many seconds (measured: each 5 s or more under load). */
export const SLOW: readonly string[] = [
  "tests/audit_engine/every_check.test.ts",
  "tests/audit_engine/politeness.test.ts",
  "tests/audit_engine/recheck_rules.test.ts",
  "tests/fuzz/openapi_fuzz.test.ts",
  "tests/mail/verify_email.test.ts",
];

const TESTS = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(TESTS);

/** Every `*.test.ts` under tests/, outside the proofs and benchmarks, sorted. */
async function testFiles(dir = TESTS): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) {
      if (e.name === "proof" || e.name === "bench") continue;
      out.push(...await testFiles(path));
    } else if (e.name.endsWith(".test.ts")) out.push(path);
  }
  return out.sort();
}

const IMPORT = /(?:import|export)\s[^;]*?from\s*["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']/g;

/** The first marker `file` or a test helper it imports names, or undefined. */
async function markerOf(file: string, seen = new Set<string>()): Promise<string | undefined> {
  if (seen.has(file)) return undefined;
  seen.add(file);
  const text = await Deno.readTextFile(file);
  const hit = [...MARKERS, ...APP_MARKERS].find((m) => text.includes(m));
  if (hit) return `${hit} (${relative(ROOT, file)})`;
  for (const m of text.matchAll(IMPORT)) {
    const dep = resolve(dirname(file), m[1] ?? m[2]);
    if (!dep.startsWith(TESTS + "/") || !dep.endsWith(".ts")) continue;
    const found = await markerOf(dep, seen);
    if (found) return found;
  }
  return undefined;
}

/** The fast tier's files (relative to the repository) and why each other one is left out. */
export async function fastTier(): Promise<{ files: string[]; left: Map<string, string> }> {
  const files: string[] = [];
  const left = new Map<string, string>();
  for (const file of await testFiles()) {
    const rel = relative(ROOT, file);
    const why = SLOW.includes(rel) ? "slow" : await markerOf(file);
    if (why) left.set(rel, why);
    else files.push(rel);
  }
  return { files, left };
}

if (import.meta.main) {
  const { files, left } = await fastTier();
  if (Deno.args.includes("--list")) {
    for (const f of files) console.log(f);
    if (Deno.args.includes("--why")) { for (const [f, why] of left) console.log(`# ${f}: ${why}`); }
    Deno.exit(0);
  }
  const run = new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", "--deny-run", "--parallel", ...Deno.args, ...files],
    cwd: ROOT,
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  });
  Deno.exit((await run.output()).code);
}
