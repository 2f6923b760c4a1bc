/**
 * `npm run openapi`: writes docs/openapi.json from the validator's schemas (scripts/openapi/document.ts).
 * `npm run openapi -- --check`: exits 1 when the committed file is not what the schemas give (CI runs the same
 * comparison as a test).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildOpenApiDocument } from './openapi/document.js';

export const OPENAPI_FILE = path.join(import.meta.dirname, '..', 'docs', 'openapi.json');

/** The file's exact text: two-space JSON and a final newline. */
export async function renderOpenApi(): Promise<string> {
  const pkg = JSON.parse(await readFile(path.join(import.meta.dirname, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return `${JSON.stringify(buildOpenApiDocument(pkg.version), null, 2)}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  const text = await renderOpenApi();
  if (process.argv.includes('--check')) {
    const committed = await readFile(OPENAPI_FILE, 'utf8').catch(() => '');
    if (committed !== text) {
      process.stderr.write(`${OPENAPI_FILE} is out of date: run npm run openapi\n`);
      process.exit(1);
    }
    process.stdout.write(`${OPENAPI_FILE} is up to date\n`);
  } else {
    await writeFile(OPENAPI_FILE, text);
    process.stdout.write(`wrote ${OPENAPI_FILE} (${Buffer.byteLength(text)} bytes)\n`);
  }
}
