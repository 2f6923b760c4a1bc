import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { renderCliHelp } from '../../../scripts/docs/cli-help.js';
import { CLI_HELP_PAGE } from '../../../scripts/docs-reference.js';

describe('docs/reference/cli-help.md', () => {
  it('is every command’s --help as the CLI prints it today (run `npm run docs:reference` after changing the CLI)', async () => {
    expect(await readFile(CLI_HELP_PAGE, 'utf8')).toBe(renderCliHelp());
  });

  it('has a section for every command, down to the leaves', () => {
    const page = renderCliHelp();
    for (const name of [
      'wecom-gateway keys create',
      'wecom-gateway config push',
      'wecom-gateway dlq redrive',
    ])
      expect(page).toContain(`## ${name}\n`);
  });
});
