/**
 * The layers of design.md, held by the module graph itself (`deno info --json main.ts`, which
 * follows the dynamic imports of the capabilities' routes too): imports point down only —
 * `kv` imports no layer above it, `domain` no adapter, job or application module, `app` no
 * adapter or job — and no module reaches itself through runtime imports (an import circle makes
 * load order matter and hides the next one). Type-only imports are allowed across a circle, not
 * up the layers.
 */
import assert from "node:assert/strict";

interface Graph {
  /** Runtime imports: module → modules, paths relative to the repository root. */
  code: Map<string, Set<string>>;
  /** Type-only imports. */
  types: Map<string, Set<string>>;
}

async function moduleGraph(): Promise<Graph> {
  const root = new URL("../../", import.meta.url).href;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "main.ts"],
    cwd: new URL(root),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier?: string }; type?: { specifier?: string } }[];
    }[];
  };
  const graph: Graph = { code: new Map(), types: new Map() };
  const local = (s?: string) => s?.startsWith(root) ? s.slice(root.length) : null;
  for (const m of info.modules) {
    const from = local(m.specifier);
    if (!from) continue;
    for (const dep of m.dependencies ?? []) {
      const code = local(dep.code?.specifier);
      const type = local(dep.type?.specifier);
      if (code) add(graph.code, from, code);
      else if (type) add(graph.types, from, type);
    }
  }
  return graph;
}

function add(map: Map<string, Set<string>>, from: string, to: string): void {
  let set = map.get(from);
  if (!set) map.set(from, set = new Set());
  set.add(to);
}

/** The layer of a module: its top folder (`main.ts` and `capabilities.ts` are the root). */
function layer(path: string): string {
  return path.includes("/") ? path.split("/")[0] : "root";
}

/** Which layers each layer must not import, at runtime or for types. */
const FORBIDDEN: Record<string, string[]> = {
  kv: ["domain", "app", "jobs", "routes", "root"],
  domain: ["app", "jobs", "routes", "root"],
  app: ["jobs", "routes", "root"],
  jobs: ["routes", "root"],
};

Deno.test("layers: imports point down only", async () => {
  const graph = await moduleGraph();
  assert.ok(graph.code.size > 100, "the graph holds the service's modules");
  const breaches: string[] = [];
  for (const map of [graph.code, graph.types]) {
    for (const [from, tos] of map) {
      for (const to of tos) {
        if (FORBIDDEN[layer(from)]?.includes(layer(to))) breaches.push(`${from} → ${to}`);
      }
    }
  }
  assert.deepEqual(breaches, []);
});

Deno.test("layers: no runtime import circle", async () => {
  const { code } = await moduleGraph();
  // Tarjan's strongly connected components: any component of two or more modules is a circle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of code.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const v of code.keys()) if (!index.has(v)) visit(v);
  assert.deepEqual(circles, []);
});
