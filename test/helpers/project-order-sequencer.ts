import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * vitest's own order (failed first, then longest first by the last run's durations, or largest first without
 * them), but with the projects in this order instead of by name: integration first, since it holds the files that
 * take minutes (each waits for timers much of that time, so they belong at the start of a 2-worker run, not at its
 * end); infra next, whose stack variants are synthesized meanwhile in a process of its own (test/infra/synth.ts)
 * instead of two workers waiting for them; unit last, hundreds of short files that fill the workers up to the end.
 */
const PROJECT_ORDER = ['integration', 'browser', 'infra', 'unit'];

export class ProjectOrderSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = PROJECT_ORDER.indexOf(spec.project.name);
      return i === -1 ? PROJECT_ORDER.length : i;
    };
    // Array.prototype.sort is stable: within a project, vitest's order stays.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
