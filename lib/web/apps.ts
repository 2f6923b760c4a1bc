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
 * function (infra/constructs/bundling.ts). A string, parsed on the first request, keeps it out of cold init.
 */
export const EMBEDDED_CONSOLE = '__WECOM_CONSOLE__';

declare const __WECOM_CONSOLE__: string | undefined;

let embedded: WebApp | undefined;

/** The console embedded in this bundle; undefined when running from source (tsx), where the caller builds it. */
export function embeddedConsole(): WebApp | undefined {
  if (typeof __WECOM_CONSOLE__ !== 'string') return undefined;
  embedded ??= JSON.parse(__WECOM_CONSOLE__) as WebApp;
  return embedded;
}
