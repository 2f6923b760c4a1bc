import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * A deployed function's stack traces, mapped to the TypeScript sources when an error is logged, not at every cold
 * start: Node's `--enable-source-maps` reads and indexes the bundle's source maps while it loads the modules (~25 ms
 * of each function's cold init), whereas an error's frames need them only on the error path. Each map is read once
 * per container, on first use. Where Node maps stacks itself (tsx locally, or the flag), stacks pass as they are.
 */
const maps = new Map<string, SourceMap | null>();

/** A frame in a bundled module: `file:///var/task/index.mjs:1:2345` or a path. */
const BUNDLE_FRAME = /(file:\/\/[^\s()]+?\.mjs|\/[^\s()]+?\.mjs):(\d+):(\d+)/g;

/** Where a repository path starts in a source the map names relative to the build's output directory. */
const REPO_PATH = /(?:^|\/)((?:lib|functions|node_modules|local|web|test)\/.*)$/;

function mapFor(file: string): SourceMap | null {
  let map = maps.get(file);
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
    } catch {
      map = null; // no map beside the module, or unreadable: its frames stay as they are
    }
    maps.set(file, map);
  }
  return map;
}

/**
 * The stack with each frame of a bundled module (`.mjs` with a `.map` beside it) pointing at its source file, line and
 * column (`lib/sender/service.ts:212:11`); other frames unchanged.
 *
 * @example mapStack(err.stack) // "Error: boom\n    at send (lib/sender/service.ts:212:11)"
 */
export function mapStack(stack: string): string {
  return process.sourceMapsEnabled ? stack : mapBundleFrames(stack);
}

/** {@link mapStack} whether or not Node maps stacks itself. */
export function mapBundleFrames(stack: string): string {
  return stack.replace(BUNDLE_FRAME, (frame, file: string, line: string, column: string) => {
    const map = mapFor(file.startsWith('file://') ? fileURLToPath(file) : file);
    const entry = map?.findEntry(Number(line) - 1, Number(column) - 1);
    if (!entry || !('originalSource' in entry) || !entry.originalSource) return frame;
    const source = REPO_PATH.exec(entry.originalSource)?.[1] ?? entry.originalSource;
    return `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  });
}
