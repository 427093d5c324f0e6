/**
 * Where the headless browser comes from: the `@sparticuz/chromium` npm package ships a Chromium
 * binary inside the package, so a machine with only Node/npm (or Deno's npm support) has a real
 * browser without an OS package or a download at run time.
 *
 * @example
 * ```ts
 * import { chromium } from "playwright-core";
 * const browser = await chromium.launch(await chromiumLaunchOptions());
 * ```
 *
 * @module
 */
import packagedChromium from "@sparticuz/chromium";

/**
 * Flags of the package's defaults that would weaken a browser pointed at pages we do not trust
 * (they suit its original Lambda use, where it renders the owner's own pages).
 */
const UNSAFE_FLAGS = new Set([
  "--disable-web-security",
  "--allow-running-insecure-content",
  "--disable-site-isolation-trials",
]);

/**
 * Without these, Chromium keeps reaching for Google's update, sync and safe-browsing hosts; on a
 * closed network every one of those is a refused connection (and noise in the page's console).
 */
const QUIET_FLAGS = [
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

/** Launch options for playwright-core: the packaged binary (unpacked once to /tmp) and its flags. */
export async function chromiumLaunchOptions(): Promise<
  { executablePath: string; args: string[]; headless: true }
> {
  const executablePath = await packagedChromium.executablePath();
  const args = packagedChromium.args.filter((a: string) => !UNSAFE_FLAGS.has(a));
  for (const flag of QUIET_FLAGS) if (!args.includes(flag)) args.push(flag);
  return { executablePath, args, headless: true };
}
