import { expect, it } from 'vitest';
import { buildWebApp } from '#lib/web/build.js';
import { packWebApp, unpackWebApp } from '#lib/web/index.js';

it('packs a web app for a bundle smaller than its files, and unpacks it byte for byte', async () => {
  const app = await buildWebApp({ entry: 'web/console/main.ts', basePath: '/console', title: 'console' });
  const packed = packWebApp(app);
  expect(unpackWebApp(packed)).toEqual(app);
  expect(packed.length).toBeLessThan(JSON.stringify(app).length / 2);
});
