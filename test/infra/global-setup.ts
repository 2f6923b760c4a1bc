/**
 * vitest globalSetup of the infra project (it runs only when a test/infra file is part of the run): starts
 * test/infra/synth-variants.ts in a process of its own, which synthesizes every stack variant the infra tests use
 * once, with bundling, into a temporary directory made for this run. It is not awaited: unit and integration
 * files run meanwhile, and synthGateway waits for the one variant it needs. Nothing outlives the run (in watch
 * mode, each rerun synthesizes anew), so a result can never be stale.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where test/infra/synth-variants.ts writes this run's synthesized variants (see test/infra/synth.ts). */
    infraSynthDir: string;
  }
}

/** Starts the synthesizing process on a new directory; `stop` ends it and removes the directory. */
function startSynthesis(): { dir: string; stop: () => Promise<void> } {
  const dir = mkdtempSync(path.join(tmpdir(), 'wecom-gateway-infra-'));
  // CDK's progress lines and nag's warnings go to a log; a failed variant's error is in its result file.
  const log = openSync(path.join(dir, 'synth.log'), 'w');
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(import.meta.dirname, 'synth-variants.ts'), dir],
    {
      stdio: ['ignore', log, log],
      // NODE_ENV=test as in vitest's workers: CDK then synthesizes in memory and throws on a failed validation.
      env: { ...process.env, NODE_ENV: 'test' },
      // A process group of its own, so that stopping it also stops the esbuild it may be running.
      detached: true,
    },
  );
  const exited = once(child, 'exit');
  closeSync(log);
  child.once('exit', (code, signal) => {
    // Lets synthGateway stop waiting for a variant that will never come (it then synthesizes it itself).
    try {
      writeFileSync(path.join(dir, 'exited'), JSON.stringify({ code, signal }));
    } catch {
      // The run is over and the directory gone.
    }
  });
  return {
    dir,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        process.kill(-child.pid, 'SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export default function setup(project: TestProject): () => Promise<void> {
  let synthesis = startSynthesis();
  project.provide('infraSynthDir', synthesis.dir);
  // Watch mode: every rerun synthesizes from the sources as they are then.
  project.onTestsRerun(async () => {
    await synthesis.stop();
    synthesis = startSynthesis();
    project.provide('infraSynthDir', synthesis.dir);
  });
  return () => synthesis.stop();
}
