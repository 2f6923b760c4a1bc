/** `npm run docs:reference`: writes the reference pages generated from the code (scripts/docs/). */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { renderCliHelp } from './docs/cli-help.js';
import { renderConfigFields } from './docs/config-fields.js';
import { renderHttpApi } from './docs/http-api.js';

const REFERENCE = path.join(import.meta.dirname, '..', 'docs', 'reference');
export const CLI_HELP_PAGE = path.join(REFERENCE, 'cli-help.md');
export const CONFIG_FIELDS_PAGE = path.join(REFERENCE, 'config-fields.md');
export const HTTP_API_PAGE = path.join(REFERENCE, 'http-api.md');

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [page, render] of [
    [CLI_HELP_PAGE, renderCliHelp],
    [CONFIG_FIELDS_PAGE, renderConfigFields],
    [HTTP_API_PAGE, () => renderHttpApi()],
  ] as const) {
    await writeFile(page, render());
    process.stdout.write(`wrote ${path.relative(process.cwd(), page)}\n`);
  }
}
