import { defineConfig } from 'vitest/config';
import { ProjectOrderSequencer } from './test/helpers/project-order-sequencer.js';

export default defineConfig({
  test: {
    // Integration tests start emulators and wait for deliveries; CDK tests run esbuild.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // 2 vCPU machines: more parallel files only adds contention to timing-sensitive integration tests.
    maxWorkers: 2,
    env: { NODE_OPTIONS: '--disable-warning=ExperimentalWarning' },
    // The ten slowest files at the end of the run (under `npm test`: at the very end of it, see the reporter).
    reporters: ['default', './test/helpers/slowest-files-reporter.ts'],
    // Integration files first, then infra, then unit (see the sequencer for why).
    sequence: { sequencer: ProjectOrderSequencer },
    projects: [
      {
        extends: true,
        // No sockets, not even loopback: test/helpers/no-network.ts makes a test that opens one fail.
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          setupFiles: ['test/helpers/no-network.ts'],
        },
      },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'] } },
      // Real chromium through Playwright (test/helpers/browser.ts: skipped with a notice where it is missing).
      {
        extends: true,
        // A page under a loaded machine takes seconds to show what a poll waits for; the default is 1 s.
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          expect: { poll: { timeout: 10_000 } },
        },
      },
      {
        extends: true,
        // Synthesizes every stack variant once per run, for all infra files (test/infra/synth.ts).
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          globalSetup: ['test/infra/global-setup.ts'],
        },
      },
    ],
  },
});
