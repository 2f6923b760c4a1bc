/** `npm run docs:reference`: writes the reference pages generated from the code (scripts/docs/). */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { renderCliHelp } from './docs/cli-help.js';
import { renderConfigFields } from './docs/config-fields.js';

const REFERENCE = path.join(import.meta.dirname, '..', 'docs', 'reference');
export const CLI_HELP_PAGE = path.join(REFERENCE, 'cli-help.md');
export const CONFIG_FIELDS_PAGE = path.join(REFERENCE, 'config-fields.md');

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [page, render] of [
    [CLI_HELP_PAGE, renderCliHelp],
    [CONFIG_FIELDS_PAGE, renderConfigFields],
  ] as const) {
    await writeFile(page, render());
    process.stdout.write(`wrote ${path.relative(process.cwd(), page)}\n`);
  }
}
