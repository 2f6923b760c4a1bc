import { gunzipSync, gzipSync } from 'node:zlib';
import type { WebApp } from './assets.js';
import type { WebBuildOptions } from './build.js';

/** The operator console: built by the CDK synth (embedded in the ingest bundle) and by the local stack at start. */
export const CONSOLE_APP: WebBuildOptions = {
  entry: 'web/console/main.ts',
  basePath: '/console',
  title: 'wecom-gateway console',
};

/**
 * The name esbuild `define` replaces with the console's {@link WebApp} as a JSON string when it bundles the ingest
 * function (infra/constructs/esbuild-options.ts): {@link packWebApp}'s, with each file gzipped, which keeps the bundle
 * (and so cold start) ~30 KB smaller than the plain files. Unpacked on the first request, not at cold init.
 */
export const EMBEDDED_CONSOLE = '__WECOM_CONSOLE__';

declare const __WECOM_CONSOLE__: string | undefined;

let embedded: WebApp | undefined;

/** The console embedded in this bundle; undefined when running from source (tsx), where the caller builds it. */
export function embeddedConsole(): WebApp | undefined {
  if (typeof __WECOM_CONSOLE__ !== 'string') return undefined;
  embedded ??= unpackWebApp(__WECOM_CONSOLE__);
  return embedded;
}

/** The app as one string for a bundle: JSON, with each file's bytes gzipped before base64. */
export function packWebApp(app: WebApp): string {
  return JSON.stringify({
    ...app,
    assets: app.assets.map((a) => ({
      ...a,
      base64: gzipSync(Buffer.from(a.base64, 'base64'), { level: 9 }).toString('base64'),
    })),
  });
}

export function unpackWebApp(packed: string): WebApp {
  const app = JSON.parse(packed) as WebApp;
  return {
    ...app,
    assets: app.assets.map((a) => ({
      ...a,
      base64: gunzipSync(Buffer.from(a.base64, 'base64')).toString('base64'),
    })),
  };
}
