/**
 * The browser's processes and their memory, read from Linux /proc. playwright-core does not
 * expose the pid of a browser it launched, so the pool launches Chromium with an inert marker
 * switch and finds the processes carrying it plus all their descendants (renderers, GPU and
 * utility processes).
 *
 * Memory is the sum of PSS (proportional set size, from `smaps_rollup`): plain RSS would count
 * the shared Chromium binary once per process and overstate a 5-process browser several times.
 * Where PSS is unreadable the RSS (`VmRSS`) is used instead, which errs on the high side.
 *
 * @module
 */

/** The marker processes and their descendants; empty off Linux or when /proc is unreadable. */
export function findProcessTree(marker: string): number[] {
  const all: { pid: number; ppid: number; marked: boolean }[] = [];
  try {
    for (const entry of Deno.readDirSync("/proc")) {
      const pid = Number(entry.name);
      if (!Number.isInteger(pid) || pid <= 0) continue;
      const ppid = readPpid(pid);
      if (ppid === null) continue;
      all.push({ pid, ppid, marked: cmdlineHas(pid, marker) });
    }
  } catch {
    return [];
  }
  const inTree = new Set(all.filter((p) => p.marked).map((p) => p.pid));
  // Children appear in any order in /proc; grow the set until it stops changing.
  let grew = inTree.size > 0;
  while (grew) {
    grew = false;
    for (const p of all) {
      if (!inTree.has(p.pid) && inTree.has(p.ppid)) {
        inTree.add(p.pid);
        grew = true;
      }
    }
  }
  return [...inTree].sort((a, b) => a - b);
}

/** The root(s) of the tree: marked processes whose parent is not marked (the browser itself). */
export function findRootProcesses(marker: string): number[] {
  const tree = new Set(findProcessTree(marker));
  return [...tree].filter((pid) => {
    const ppid = readPpid(pid);
    return ppid === null || !tree.has(ppid);
  });
}

/** PSS (else RSS) of each pid, summed, in bytes. Processes that vanished count 0. */
export function treeMemoryBytes(pids: number[]): number {
  let total = 0;
  for (const pid of pids) total += processMemoryBytes(pid);
  return total;
}

/** One process's PSS, else its RSS, in bytes; 0 when it is gone. */
export function processMemoryBytes(pid: number): number {
  const pss = readKb(`/proc/${pid}/smaps_rollup`, "Pss:");
  if (pss !== null) return pss * 1024;
  const rss = readKb(`/proc/${pid}/status`, "VmRSS:");
  return (rss ?? 0) * 1024;
}

/** Sends SIGKILL to every pid (already gone is fine). */
export function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}

function readPpid(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")".
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(rest[1]);
  } catch {
    return null;
  }
}

function cmdlineHas(pid: number, marker: string): boolean {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`).includes(marker);
  } catch {
    return false;
  }
}

function readKb(path: string, field: string): number | null {
  try {
    const text = Deno.readTextFileSync(path);
    const i = text.indexOf(field);
    if (i < 0) return null;
    const n = Number.parseInt(text.slice(i + field.length).trim(), 10);
    return Number.isFinite(n) ? n : null;
  } catch {
    return null;
  }
}
