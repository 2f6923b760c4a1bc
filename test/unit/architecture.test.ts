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

const LIB = sources('lib').flatMap(importsOf);
const ALL = [
  ...LIB,
  ...['functions', 'infra', 'local', 'bench', 'scripts'].flatMap(sources).flatMap(importsOf),
];

/** `lib/ingest/accept.ts` → `lib/ingest`. */
const moduleOf = (path: string): string => path.split('/').slice(0, 2).join('/');
const show = (edges: Edge[]) => edges.map((e) => `${e.file} → ${e.target}`);

describe('the import graph', () => {
  it('is read at all (a parser that finds nothing would pass every rule below)', () => {
    expect(LIB.length).toBeGreaterThan(100);
    expect(show(ALL)).toContain('functions/ingest/app.ts → lib/ingest/index.js');
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
});
