import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start emulators and wait for deliveries; CDK tests run esbuild.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // 2 vCPU machines: more parallel files only adds contention to timing-sensitive integration tests.
    maxWorkers: 2,
    env: { NODE_OPTIONS: '--disable-warning=ExperimentalWarning' },
  },
});
