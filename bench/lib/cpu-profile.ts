/**
 * Reads a V8 CPU profile (`node --cpu-prof`, a `.cpuprofile` file) and ranks where the time went by self time,
 * mapped back to source files through the bundle's source map. Node's `--enable-source-maps` maps stack traces
 * only, never a profile's call frames, so the mapping is done here with Node's own `module.SourceMap` (the same
 * parser it uses for stack traces): a call frame's position is where its function starts in the minified bundle,
 * and the map gives the original file, line and — where esbuild recorded one — the original name.
 */
import { readFile } from 'node:fs/promises';
import { SourceMap } from 'node:module';
import { basename, dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from '../../infra/constructs/esbuild-options.js';

interface CallFrame {
  functionName: string;
  url: string;
  /** 0-based. */
  lineNumber: number;
  /** 0-based. */
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  /** µs since the previous sample. */
  timeDeltas: number[];
}

export interface SelfTimeEntry {
  /** The function's original name where the source map has it, else the bundle's (minified) one. */
  readonly name: string;
  /** Repository-relative source path (`node_modules/…` for dependencies), or `node:…` for Node's internals. */
  readonly file: string;
  /** 1-based line of the function's start in `file`. */
  readonly line: number;
  readonly selfMs: number;
  /** Share of the busy time (everything but `(idle)`). */
  readonly pct: number;
}

export interface ProfileSummary {
  readonly file: string;
  /** Sampled wall time, ms. */
  readonly wallMs: number;
  /** Sampled time not idle, ms. */
  readonly busyMs: number;
  readonly top: readonly SelfTimeEntry[];
  /** Busy time by where the code comes from: the gateway's own, a dependency package, Node, GC. */
  readonly byOrigin: readonly { readonly origin: string; readonly selfMs: number; readonly pct: number }[];
  /** The gateway's own files (lib/, functions/) by self time, most first. */
  readonly gatewayFiles: readonly { readonly file: string; readonly selfMs: number; readonly pct: number }[];
}

/**
 * The `top` entries by self time of one profile. `bundle`: the bundle's entry `.mjs`; frames in it and in its
 * chunks are mapped through the `.map` beside each, frames from other files keep their own location.
 *
 * @example const s = await summarizeProfile('/tmp/p/CPU.123.cpuprofile', { bundle: '/tmp/b/sender/index.mjs' });
 */
export async function summarizeProfile(
  file: string,
  opts: { bundle?: string; top?: number } = {},
): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const maps = opts.bundle ? await loadMaps(dirname(resolve(opts.bundle)), profile) : new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const mean = (profile.endTime - profile.startTime) / Math.max(1, profile.samples.length);
  profile.samples.forEach((id, i) => {
    // timeDeltas[i] is the time since the previous sample; the time after a sample belongs to it.
    const dt = profile.timeDeltas[i + 1] ?? mean;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
  });

  const entries = new Map<string, { name: string; file: string; line: number; us: number }>();
  let idleUs = 0;
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    totalUs += us;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const where = locate(frame, maps.get(frame.url));
    const key = `${where.name}\u0000${where.file}\u0000${where.line}`;
    const e = entries.get(key) ?? { ...where, us: 0 };
    e.us += us;
    entries.set(key, e);
  }
  const busyUs = Math.max(1, totalUs - idleUs);
  const ranked = [...entries.values()].sort((a, b) => b.us - a.us);
  const origins = new Map<string, number>();
  const ownFiles = new Map<string, number>();
  for (const e of ranked) {
    const origin = originOf(e.file);
    origins.set(origin, (origins.get(origin) ?? 0) + e.us);
    if (origin.startsWith('gateway ')) ownFiles.set(e.file, (ownFiles.get(e.file) ?? 0) + e.us);
  }
  const share = (entries: Iterable<[string, number]>) =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .map(([k, us]) => ({ k, selfMs: round1(us / 1000), pct: round1((100 * us) / busyUs) }));
  return {
    file,
    wallMs: round1(totalUs / 1000),
    busyMs: round1(busyUs / 1000),
    top: ranked.slice(0, opts.top ?? 15).map((e) => ({
      name: e.name,
      file: e.file,
      line: e.line,
      selfMs: round1(e.us / 1000),
      pct: round1((100 * e.us) / busyUs),
    })),
    byOrigin: share(origins).map(({ k, ...rest }) => ({ origin: k, ...rest })),
    gatewayFiles: share(ownFiles).map(({ k, ...rest }) => ({ file: k, ...rest })),
  };
}

const round1 = (n: number) => Math.round(n * 10) / 10;

interface LoadedMap {
  map: SourceMap;
  /** Directory the map's `sources` are relative to. */
  dir: string;
}

/**
 * The source maps of the bundle's modules a profile ran: its entry and each chunk it loaded (code splitting), by
 * the `file://` URL the profile names them with. Each `.mjs` has its `.map` beside it.
 */
async function loadMaps(bundleDir: string, profile: CpuProfile): Promise<Map<string, LoadedMap>> {
  const prefix = `file://${bundleDir}/`;
  const urls = new Set(
    profile.nodes.map((n) => n.callFrame.url).filter((u) => u.startsWith(prefix) && u.endsWith('.mjs')),
  );
  const maps = new Map<string, LoadedMap>();
  for (const url of urls) {
    const path = fileURLToPath(url);
    try {
      const payload = JSON.parse(await readFile(`${path}.map`, 'utf8'));
      maps.set(url, { map: new SourceMap(payload), dir: dirname(path) });
    } catch {
      // No map beside it: its frames keep their bundle locations.
    }
  }
  return maps;
}

/** A call frame's original name, file and 1-based line. */
function locate(
  frame: CallFrame,
  loaded: LoadedMap | undefined,
): { name: string; file: string; line: number } {
  const fallbackName = frame.functionName || '(anonymous)';
  if (loaded && frame.lineNumber >= 0) {
    const entry = loaded.map.findEntry(frame.lineNumber, frame.columnNumber) as {
      originalSource?: string;
      originalLine?: number;
      name?: string;
    };
    if (entry.originalSource !== undefined && entry.originalLine !== undefined) {
      const source = entry.originalSource.startsWith('file://')
        ? fileURLToPath(entry.originalSource)
        : resolve(loaded.dir, entry.originalSource);
      return {
        name: entry.name && frame.functionName ? entry.name : fallbackName,
        file: relative(REPO_ROOT, source),
        line: entry.originalLine + 1,
      };
    }
  }
  if (frame.url === '') return { name: fallbackName, file: '', line: 0 };
  const file = frame.url.startsWith('file://') ? relative(REPO_ROOT, fileURLToPath(frame.url)) : frame.url;
  return { name: fallbackName, file: file || basename(frame.url), line: frame.lineNumber + 1 };
}

/** Where a source file comes from: `gateway lib/…`, a package name, `node` internals, or V8's own entries. */
export function originOf(file: string): string {
  if (file === '') return 'V8 (program, GC, builtins)';
  if (file.startsWith('node:')) return 'node internals';
  const nm = file.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? file);
  }
  const top = file.split('/')[0] ?? file;
  if (['lib', 'functions', 'local'].includes(top)) return `gateway ${top}/`;
  // The bench's own children (the API Gateway and IPC shims), bundled without a map.
  if (file.endsWith('-shim.mjs')) return 'bench shim';
  return file;
}
