/**
 * Runs load/gateway.yml with artillery in a process of its own (so its event loop never shares time with the
 * gateway's), streams its console output, and returns its JSON report.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTILLERY_BIN, LOAD_DIR, loadToolEnv } from './deps.js';

export const SCENARIO_FILE = join(LOAD_DIR, 'gateway.yml');

export interface Phase {
  name: string;
  duration: number;
  arrivalRate: number;
  rampTo?: number;
}

/** The counters and summaries of artillery's `--output` report that the load report keeps. */
export interface ArtilleryAggregate {
  counters: Record<string, number>;
  summaries: Record<
    string,
    { min: number; max: number; mean: number; p50: number; p95: number; p99: number }
  >;
}

export interface ArtilleryRun {
  exitCode: number | null;
  aggregate: ArtilleryAggregate;
  ms: number;
}

/**
 * The phases of a load profile (an `environments` entry of gateway.yml), read from the file itself so that
 * `--duration` can stretch them without a second copy of the numbers. The file writes each phase as one flow map.
 */
export async function profilePhases(profile: string): Promise<Phase[]> {
  const text = await readFile(SCENARIO_FILE, 'utf8');
  const block = new RegExp(`^ {4}${profile}:\\n {6}phases:\\n((?: {8}- \\{.*\\}\\n)+)`, 'm').exec(text)?.[1];
  if (!block) throw new Error(`no load profile "${profile}" in ${SCENARIO_FILE} (config.environments)`);
  return block
    .trim()
    .split('\n')
    .map((line) => {
      const field = (k: string) => /:\s*([^,}\s]+)/.exec(line.slice(line.indexOf(`${k}:`)))?.[1];
      const rampTo = line.includes('rampTo:') ? Number(field('rampTo')) : undefined;
      return {
        name: String(field('name')),
        duration: Number(field('duration')),
        arrivalRate: Number(field('arrivalRate')),
        ...(rampTo !== undefined ? { rampTo } : {}),
      };
    });
}

/** The same phases stretched or shrunk to `seconds` in total (rates unchanged, each phase at least 1 s). */
export function scalePhases(phases: Phase[], seconds: number): Phase[] {
  const total = phases.reduce((a, p) => a + p.duration, 0);
  return phases.map((p) => ({ ...p, duration: Math.max(1, Math.round((p.duration * seconds) / total)) }));
}

export async function runArtillery(opts: {
  target: string;
  apiKey: string;
  profile: string;
  phases?: Phase[];
  recordDir: string;
  outputFile: string;
  runId: string;
  env?: Record<string, string>;
  say: (line: string) => void;
  timeoutMs: number;
}): Promise<ArtilleryRun> {
  const args = [ARTILLERY_BIN, 'run', '--environment', opts.profile, '--output', opts.outputFile];
  if (opts.phases) args.push('--overrides', JSON.stringify({ config: { phases: opts.phases } }));
  args.push(SCENARIO_FILE);
  const started = Date.now();
  const child = spawn(process.execPath, args, {
    cwd: LOAD_DIR,
    env: loadToolEnv({
      WGW_TARGET: opts.target,
      WGW_API_KEY: opts.apiKey,
      WGW_RECORD_DIR: opts.recordDir,
      WGW_RUN_ID: opts.runId,
      // One worker thread: on 2 vCPU more workers only take CPU from the gateway under test.
      WORKERS: '1',
      ...opts.env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (c: Buffer) => process.stdout.write(c));
  child.stderr.on('data', (c: Buffer) => process.stderr.write(c));
  const timer = setTimeout(() => {
    opts.say(`load: artillery still running after ${opts.timeoutMs / 1000} s, stopping it`);
    child.kill('SIGKILL');
  }, opts.timeoutMs);
  const exitCode = await new Promise<number | null>((resolve) => {
    child.once('error', () => resolve(-1));
    child.once('close', resolve);
  });
  clearTimeout(timer);
  const report = JSON.parse(await readFile(opts.outputFile, 'utf8').catch(() => '{}')) as {
    aggregate?: Partial<ArtilleryAggregate>;
  };
  return {
    exitCode,
    aggregate: { counters: report.aggregate?.counters ?? {}, summaries: report.aggregate?.summaries ?? {} },
    ms: Date.now() - started,
  };
}
