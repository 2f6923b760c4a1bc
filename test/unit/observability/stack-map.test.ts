import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapBundleFrames } from '#lib/observability/stack-map.js';

describe('mapBundleFrames', () => {
  let dir: string;
  let stack: string;

  beforeAll(async () => {
    // Bundled as the functions are: minified ESM with a source map beside it, no sources embedded.
    dir = await mkdtemp(join(tmpdir(), 'wgw-stack-map-'));
    await build({
      entryPoints: { index: 'test/fixtures/stack-map/thrower.ts' },
      bundle: true,
      format: 'esm',
      platform: 'node',
      minify: true,
      sourcemap: true,
      sourcesContent: false,
      outdir: dir,
      outExtension: { '.js': '.mjs' },
      logLevel: 'silent',
    });
    // In a plain node process, as Lambda runs it: vitest would map the stack itself.
    const script = `import(${JSON.stringify(pathToFileURL(join(dir, 'index.mjs')).href)}).then((m) => {
      try { m.failDeep(2); } catch (err) { process.stdout.write(err.stack); }
    });`;
    stack = spawnSync(process.execPath, ['-e', script], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    }).stdout;
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("points a bundled module's frames at the TypeScript source, line and column", () => {
    expect(stack).toMatch(/index\.mjs:1:\d+/);
    const mapped = mapBundleFrames(stack);
    expect(mapped).toContain('Error: boom from the fixture');
    // The throw is on line 4 of the fixture, the recursive calls on line 3.
    expect(mapped).toMatch(/test\/fixtures\/stack-map\/thrower\.ts:4:\d+/);
    expect(mapped).toMatch(/test\/fixtures\/stack-map\/thrower\.ts:3:\d+/);
    expect(mapped).not.toMatch(/index\.mjs:1:\d+/);
  });

  it('leaves frames alone that have no map beside them', () => {
    const foreign = 'Error: x\n    at f (file:///nowhere/else.mjs:1:10)\n    at g (node:internal/x:2:3)';
    expect(mapBundleFrames(foreign)).toBe(foreign);
  });
});
