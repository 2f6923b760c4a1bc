/**
 * The layering rules of docs/architecture.md, checked against the imports of every source file. A new import that
 * breaks one fails here, with the file and the import named.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** Every `.ts` file under `dir` (repository-relative). */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f));
}

/** Static and dynamic imports and re-exports; type-only imports count too (they are arrows in the design). */
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

interface Edge {
  file: string;
  /** Repository-relative path for `#…` and relative imports; the package name otherwise. */
  target: string;
}

function importsOf(file: string): Edge[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => {
    const spec = (m[1] ?? m[2]) as string;
    if (spec.startsWith('#')) return { file, target: spec.slice(1) };
    if (spec.startsWith('.')) return { file, target: relative(ROOT, resolve(ROOT, dirname(file), spec)) };
    return { file, target: spec };
  });
}

const LIB_FILES = sources('lib');
const LIB = LIB_FILES.flatMap(importsOf);
const ALL = [
  ...LIB,
  ...['functions', 'infra', 'local', 'bench', 'scripts'].flatMap(sources).flatMap(importsOf),
];

/** `lib/ingest/accept.ts` → `lib/ingest`. */
const moduleOf = (path: string): string => path.split('/').slice(0, 2).join('/');
const show = (edges: Edge[]) => edges.map((e) => `${e.file} → ${e.target}`);

/** `lib/model/index.js` (as imported) → `lib/model/index.ts`, the file it names. */
const fileOf = (target: string): string => target.replace(/\.js$/, '.ts');

/**
 * The import cycles of a graph (file → files it imports), one per strongly connected component (Tarjan), each
 * written as a path that returns to its start (`a.ts → b.ts → a.ts`), followed by the component's other files. A
 * file that imports itself is a cycle too.
 */
function cyclesOf(graph: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const components: string[][] = [];
  const connect = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (stack.includes(next))
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      component.push(member);
    } while (member !== node);
    components.push(component);
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return components
    .filter((c) => c.length > 1 || graph.get(c[0] as string)?.has(c[0] as string))
    .map((c) => {
      const path = pathBack(graph, new Set(c), [...c].sort()[0] as string);
      const others = c.filter((f) => !path.includes(f)).sort();
      return path.join(' → ') + (others.length ? `; tangled with ${others.join(', ')}` : '');
    })
    .sort();
}

/** The shortest path from `start` back to itself inside one component (breadth first). */
function pathBack(
  graph: ReadonlyMap<string, ReadonlySet<string>>,
  within: Set<string>,
  start: string,
): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() as string;
    for (const next of graph.get(node) ?? []) {
      if (next === start) {
        const back: string[] = [];
        for (let at = node; at !== start; at = cameFrom.get(at) as string) back.unshift(at);
        return [start, ...back, start];
      }
      if (within.has(next) && !cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}

describe('the import graph', () => {
  it('is read at all (a parser that finds nothing would pass every rule below)', () => {
    expect(LIB.length).toBeGreaterThan(100);
    expect(show(ALL)).toContain('functions/ingest/app.ts → lib/ingest/service.js');
    expect(show(ALL)).toContain('functions/ingest/app.ts → lib/ingest/recall.js'); // a dynamic import
    expect(show(LIB)).toContain('lib/sender/service.ts → lib/model/index.js');
  });

  it('keeps the features apart: ingest, sender, receipts (callbacks) and notify never import each other', () => {
    const features = ['lib/ingest', 'lib/sender', 'lib/receipts', 'lib/notify'];
    const crossing = LIB.filter(
      (e) =>
        features.includes(moduleOf(e.file)) &&
        features.some((f) => f !== moduleOf(e.file) && e.target.startsWith(`${f}/`)),
    );
    expect(show(crossing)).toEqual([]);
  });

  it('keeps the operator tools on top: nothing in lib/ but lib/ops imports lib/ops', () => {
    const up = LIB.filter((e) => moduleOf(e.file) !== 'lib/ops' && e.target.startsWith('lib/ops'));
    expect(show(up)).toEqual([]);
  });

  it("gives ingest and the sender lib/notify's status listener only, not its webhook sender (bundle size)", () => {
    const shared = ['lib/runtime/shared.ts', 'lib/runtime/ingest.ts', 'lib/runtime/sender.ts'];
    const edges = LIB.filter((e) => shared.includes(e.file) && e.target.startsWith('lib/notify/'));
    expect(show(edges)).toEqual(['lib/runtime/shared.ts → lib/notify/emit.js']);
  });

  it('keeps lib/ the ground floor: it never imports local/, infra/, functions/, bench/ or test/', () => {
    const upward = LIB.filter((e) => /^(local|infra|functions|bench|test|scripts)\//.test(e.target));
    expect(show(upward)).toEqual([]);
  });

  it('keeps the benchmarks off the test helpers', () => {
    const benchToTests = ALL.filter((e) => e.file.startsWith('bench/') && e.target.startsWith('test/'));
    expect(show(benchToTests)).toEqual([]);
  });

  it('lets only the adapters see the AWS SDK and its errors', () => {
    const adapters = ['lib/store', 'lib/queue'];
    const sdk = LIB.filter((e) => e.target.startsWith('@aws-sdk/') || e.target.startsWith('lib/aws'));
    const outside = sdk.filter(
      (e) =>
        !adapters.includes(moduleOf(e.file)) &&
        moduleOf(e.file) !== 'lib/aws' &&
        // Config is read from Secrets Manager at cold start (a failure ends the start) and re-read with a bounded
        // age (a failure keeps the last good config, lib/config/source.ts): no request sees an SDK error.
        !(
          e.file === 'lib/config/load.ts' &&
          (e.target === '@aws-sdk/client-secrets-manager' || e.target.startsWith('lib/aws'))
        ),
    );
    expect(show(outside)).toEqual([]);
  });

  it('keeps HTTP out of the domain: features and formats never import lib/http', () => {
    const domain = ['lib/ingest', 'lib/sender', 'lib/receipts', 'lib/notify', 'lib/model', 'lib/messages'];
    const http = LIB.filter((e) => domain.includes(moduleOf(e.file)) && e.target.startsWith('lib/http'));
    expect(show(http)).toEqual([]);
  });

  it('has no cycle between the modules of lib/', () => {
    const arrows = new Map<string, Set<string>>();
    for (const e of LIB) {
      const from = moduleOf(e.file);
      const to = moduleOf(e.target);
      if (!to.startsWith('lib/') || to === from) continue;
      arrows.set(from, (arrows.get(from) ?? new Set()).add(to));
    }
    const cycles: string[] = [];
    const visit = (node: string, path: string[]) => {
      if (path.includes(node)) {
        cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
        return;
      }
      for (const next of arrows.get(node) ?? []) visit(next, [...path, node]);
    };
    for (const node of arrows.keys()) visit(node, []);
    expect(cycles).toEqual([]);
  });

  it('finds the cycles of a graph, those inside one module too (a made-up graph, so the test below can fail)', () => {
    const graph = new Map([
      ['lib/a/x.ts', new Set(['lib/a/y.ts'])],
      ['lib/a/y.ts', new Set(['lib/a/x.ts', 'lib/b/z.ts'])],
      ['lib/b/z.ts', new Set(['lib/c/u.ts'])],
      ['lib/c/u.ts', new Set(['lib/c/v.ts'])],
      ['lib/c/v.ts', new Set(['lib/b/z.ts', 'lib/c/w.ts', 'lib/c/t.ts'])],
      ['lib/c/t.ts', new Set(['lib/c/u.ts'])],
      ['lib/c/w.ts', new Set(['lib/c/w.ts', 'lib/d/acyclic.ts'])],
    ]);
    expect(cyclesOf(graph)).toEqual([
      'lib/a/x.ts → lib/a/y.ts → lib/a/x.ts',
      'lib/b/z.ts → lib/c/u.ts → lib/c/v.ts → lib/b/z.ts; tangled with lib/c/t.ts',
      'lib/c/w.ts → lib/c/w.ts',
    ]);
  });

  it('has no cycle between the files of lib/, type-only imports and files of one module included', () => {
    const graph = new Map<string, Set<string>>();
    for (const e of LIB) {
      if (!e.target.startsWith('lib/')) continue;
      graph.set(e.file, (graph.get(e.file) ?? new Set()).add(fileOf(e.target)));
    }
    // Every arrow ends at a real file: a wrong mapping from import to file would hide every cycle.
    const targets = [...graph.values()].flatMap((s) => [...s]);
    expect(targets.filter((f) => !LIB_FILES.includes(f))).toEqual([]);
    expect(graph.get('lib/sender/service.ts')).toContain('lib/sender/outcomes.ts');
    expect(cyclesOf(graph)).toEqual([]);
  });
});
