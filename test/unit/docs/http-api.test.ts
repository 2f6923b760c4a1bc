import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ROUTES, routeKey } from '#lib/resources/index.js';
import { renderHttpApi } from '../../../scripts/docs/http-api.js';
import { HTTP_API_PAGE } from '../../../scripts/docs-reference.js';

describe('docs/reference/http-api.md', () => {
  it('is every route of docs/openapi.json today (run `npm run docs:reference` after `npm run openapi`)', async () => {
    expect(await readFile(HTTP_API_PAGE, 'utf8')).toBe(renderHttpApi());
  });

  it('lists every route the gateway serves', () => {
    const page = renderHttpApi();
    for (const route of ROUTES) expect(page).toContain(`| \`${routeKey(route)}\` |`);
  });
});
