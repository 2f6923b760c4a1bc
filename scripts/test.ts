/**
 * `npm test`: `tsx scripts/test.ts SCRIPT…` runs the given npm scripts one after another, as
 * `npm run a && npm run b && …` would (it stops at the first that fails, with that exit code); `a+b` runs a and b
 * at the same time (a step that mostly waits, such as the load test's arrival phases, beside one that computes),
 * and fails when either does. `a+~b` runs b at the lowest CPU priority (nice 19): it gets the CPU only while a
 * leaves it idle, as the integration tests do while they wait for WeCom's windows, so installing artillery and
 * building the docs there costs the suite next to nothing instead of minutes of their own. It then prints how
 * long each took next to the load average (timings on a shared 2-core machine mean little without it) and the
 * ten slowest test files of every vitest run among them, so that both come last, after the load and DynamoDB Local
 * steps. The vitest runs hand their timings over through the file named by WGW_TEST_TIMINGS
 * (test/helpers/slowest-files-reporter.ts).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, constants, loadavg, setPriority, tmpdir } from 'node:os';
import path from 'node:path';
import { type FileTiming, formatSlowest, TIMINGS_ENV } from '../test/helpers/slowest-files-reporter.js';

const scripts = process.argv.slice(2);
if (scripts.length === 0) throw new Error('usage: tsx scripts/test.ts NPM_SCRIPT…');

const dir = mkdtempSync(path.join(tmpdir(), 'wecom-gateway-test-'));
const timingsFile = path.join(dir, 'timings.jsonl');
const load = () => (loadavg()[0] ?? 0).toFixed(1);
const steps: { script: string; seconds: number; loadBefore: string; loadAfter: string }[] = [];
const LOW_PRIORITY = '~';

/** Runs one npm script; resolves with its exit code once it ends, and records its step. */
function runScript(step: string): Promise<number> {
  const low = step.startsWith(LOW_PRIORITY);
  const script = low ? step.slice(LOW_PRIORITY.length) : step;
  const loadBefore = load();
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', script], {
      stdio: 'inherit',
      env: { ...process.env, [TIMINGS_ENV]: timingsFile },
    });
    // Before npm (a few hundred ms to start) forks the script's processes, which inherit the priority.
    if (low && child.pid !== undefined) setPriority(child.pid, constants.priority.PRIORITY_LOW);
    child.on('close', (code, signal) => {
      steps.push({ script: step, seconds: (Date.now() - started) / 1000, loadBefore, loadAfter: load() });
      resolve(code ?? (signal === 'SIGINT' ? 130 : 1));
    });
  });
}

let failed: { script: string; code: number } | undefined;
let wall = 0;
for (const group of scripts) {
  const started = Date.now();
  const together = group.split('+');
  const codes = await Promise.all(together.map(runScript));
  wall += (Date.now() - started) / 1000;
  const i = codes.findIndex((c) => c !== 0);
  if (i >= 0) {
    failed = { script: (together[i] as string).replace(LOW_PRIORITY, ''), code: codes[i] as number };
    break;
  }
}

const total = wall;
const width = Math.max(...steps.map((s) => s.script.length));
const lines = steps.map(
  (s) =>
    `  ${s.script.padEnd(width)}  ${s.seconds.toFixed(0).padStart(5)} s   load average ${s.loadBefore} → ${s.loadAfter}`,
);
const timings: FileTiming[] = existsSync(timingsFile)
  ? readFileSync(timingsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .flatMap((line) => JSON.parse(line) as FileTiming[])
  : [];
rmSync(dir, { recursive: true, force: true });

process.stdout.write(
  `\nnpm test: ${failed ? `${failed.script} FAILED (exit ${failed.code})` : 'all passed'}, ${total.toFixed(0)} s (wall clock; load average over 1 minute, ${availableParallelism()} cores)\n${lines.join('\n')}\n`,
);
if (timings.length > 0)
  process.stdout.write(formatSlowest(timings, 'Slowest test files (import, setup, hooks and tests):'));
process.exit(failed?.code ?? 0);
