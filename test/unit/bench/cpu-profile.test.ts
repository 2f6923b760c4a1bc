import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { originOf, summarizeProfile } from '../../../bench/lib/cpu-profile.js';

/** Two functions in a source file of their own, bundled and minified with a source map, as CDK bundles. */
const SOURCE = `export function hotLoop(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += i;
  return s;
}

export function coldPath(x) {
  return String(x).split('').reverse().join('');
}
`;

describe('summarizeProfile', () => {
  let dir: string;
  let bundle: string;
  /** 0-based position of each function's start in the minified bundle. */
  const at: Record<string, { line: number; col: number }> = {};

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wgw-cpu-profile-'));
    await writeFile(join(dir, 'work.js'), SOURCE);
    bundle = join(dir, 'out', 'index.mjs');
    await build({
      entryPoints: [join(dir, 'work.js')],
      bundle: true,
      format: 'esm',
      minify: true,
      sourcemap: true,
      outfile: bundle,
      logLevel: 'silent',
    });
    const lines = (await readFile(bundle, 'utf8')).split('\n');
    for (const [name, needle] of [
      ['hotLoop', 'for('],
      ['coldPath', '.split("")'],
    ] as const) {
      const line = lines.findIndex((l) => l.includes(needle));
      // Where V8 puts a function in a profile's call frame: at its parameter list's `(`.
      const text = lines[line] as string;
      const col = text.indexOf('(', text.lastIndexOf('function', text.indexOf(needle)));
      at[name] = { line, col };
    }
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A profile with 1 ms samples: `hot` samples in hotLoop, `cold` in coldPath, `idle` idle, `gc` in GC. */
  async function profileFile(counts: {
    hot: number;
    cold: number;
    idle: number;
    gc: number;
  }): Promise<string> {
    const url = `file://${bundle}`;
    const frame = (functionName: string, where?: { line: number; col: number }) => ({
      functionName,
      scriptId: where ? '1' : '0',
      url: where ? url : '',
      lineNumber: where?.line ?? -1,
      columnNumber: where?.col ?? -1,
    });
    const nodes = [
      { id: 1, callFrame: frame('(root)'), children: [2, 3, 4, 5] },
      { id: 2, callFrame: frame('a', at.hotLoop) },
      { id: 3, callFrame: frame('b', at.coldPath) },
      { id: 4, callFrame: frame('(idle)') },
      { id: 5, callFrame: frame('(garbage collector)') },
    ];
    const samples = [
      ...Array<number>(counts.hot).fill(2),
      ...Array<number>(counts.cold).fill(3),
      ...Array<number>(counts.idle).fill(4),
      ...Array<number>(counts.gc).fill(5),
    ];
    const file = join(dir, `p-${samples.length}.cpuprofile`);
    await writeFile(
      file,
      JSON.stringify({
        nodes,
        startTime: 0,
        endTime: samples.length * 1000,
        samples,
        timeDeltas: samples.map(() => 1000),
      }),
    );
    return file;
  }

  it('ranks functions by self time, mapped to their source file, line and original name', async () => {
    const file = await profileFile({ hot: 60, cold: 20, idle: 100, gc: 20 });

    const s = await summarizeProfile(file, { bundle });

    expect(s.busyMs).toBe(100);
    expect(s.top.map((e) => [e.name, e.pct])).toEqual([
      ['hotLoop', 60],
      ['coldPath', 20],
      ['(garbage collector)', 20],
    ]);
    expect(s.top[0]).toMatchObject({ line: 1, selfMs: 60 });
    expect(s.top[0]?.file.endsWith('work.js')).toBe(true);
    expect(s.top[1]?.line).toBe(7);
  });

  it('keeps the bundle position when no source map is given', async () => {
    const file = await profileFile({ hot: 5, cold: 0, idle: 0, gc: 0 });

    const s = await summarizeProfile(file);

    expect(s.top[0]).toMatchObject({ name: 'a', line: (at.hotLoop?.line ?? 0) + 1 });
    expect(s.top[0]?.file.endsWith('index.mjs')).toBe(true);
  });
});

describe('originOf', () => {
  it('names the package, the gateway folder, Node or V8 a source file comes from', () => {
    expect(originOf('node_modules/@smithy/core/dist-es/index.js')).toBe('@smithy/core');
    expect(originOf('node_modules/undici/lib/dispatcher/pool.js')).toBe('undici');
    expect(originOf('lib/quota/counters.ts')).toBe('gateway lib/');
    expect(originOf('node:internal/streams/writable')).toBe('node internals');
    expect(originOf('')).toBe('V8 (program, GC, builtins)');
  });
});
