/**
 * vitest reporter (next to the default one, vitest.config.ts): the ten slowest test files of the run, each with
 * the time from its start to its end in its worker (import, setup, hooks and tests).
 *
 * Under `npm test` (scripts/test.ts sets WGW_TEST_TIMINGS to a file) it appends the run's timings there instead,
 * and scripts/test.ts prints the slowest ten of all its vitest runs at the very end, after the load and DynamoDB
 * Local steps; run on its own (`npm run test:unit`, `npx vitest run FILE`) it prints them at the end of the run.
 */
import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

export interface FileTiming {
  readonly file: string;
  readonly ms: number;
  /** Which run: undefined for the main one, 'DynamoDB Local' for scripts/test-dynamodb-local.ts. */
  readonly pass?: string;
}

export const TIMINGS_ENV = 'WGW_TEST_TIMINGS';

/** The `count` slowest files, one line each, under a title. */
export function formatSlowest(timings: readonly FileTiming[], title: string, count = 10): string {
  const slowest = [...timings].sort((a, b) => b.ms - a.ms).slice(0, count);
  const lines = slowest.map(
    (t) => `  ${(t.ms / 1000).toFixed(1).padStart(7)} s  ${t.file}${t.pass ? `  (${t.pass} pass)` : ''}`,
  );
  return `\n${title}\n${lines.join('\n')}\n`;
}

function timingOf(module: TestModule, pass: string | undefined): FileTiming {
  const d = module.diagnostic();
  const ms =
    d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration;
  return { file: module.relativeModuleId, ms, ...(pass ? { pass } : {}) };
}

export default class SlowestFilesReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const pass = process.env.DYNAMO_ENGINE === 'dynamodb-local' ? 'DynamoDB Local' : undefined;
    const timings = modules.map((m) => timingOf(m, pass));
    const file = process.env[TIMINGS_ENV];
    if (file) appendFileSync(file, `${JSON.stringify(timings)}\n`);
    else if (timings.length > 0)
      process.stdout.write(formatSlowest(timings, 'Slowest test files (import, setup, hooks and tests):'));
  }
}
