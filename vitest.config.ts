import { defineConfig } from 'vitest/config';
import { ProjectOrderSequencer } from './test/helpers/project-order-sequencer.js';

/**
 * A worker keeps the modules it imported for its next test file instead of importing everything again per file:
 * the unit project took 88 s isolated and 35 s so, infra 63 s and 34 s. It holds because no test mocks a module
 * (vi.mock) or leaves global state behind; each file builds its own stack, clients and fakes. The unit project's
 * socket ban (no-network.ts) patches node:net for its worker, and unit files run last (the sequencer), so no
 * integration file runs in a worker after it. The browser files stay isolated: five files, each its own browser.
 */
const SHARED_MODULES = { isolate: false } as const;

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
          ...SHARED_MODULES,
        },
      },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], ...SHARED_MODULES },
      },
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
          ...SHARED_MODULES,
        },
      },
    ],
  },
});
