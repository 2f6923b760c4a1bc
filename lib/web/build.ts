import { createHash } from 'node:crypto';
import { basename, resolve } from 'node:path';
import { type BuildOptions, type BuildResult, build, buildSync } from 'esbuild';
import type { WebApp, WebAsset } from './assets.js';

/** Tooling only (esbuild is a dev dependency): the local servers and the CDK synth build apps; bundles embed them. */
export interface WebBuildOptions {
  /** The app's entry, e.g. `web/console/main.ts`; CSS it imports becomes one stylesheet. */
  entry: string;
  basePath: string;
  /** The page title. */
  title: string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

export async function buildWebApp(options: WebBuildOptions): Promise<WebApp> {
  return assemble(options, await build(esbuildOptions(options)));
}

/** The same build, synchronously: CDK constructs are built synchronously, and the ingest bundle embeds the console. */
export function buildWebAppSync(options: WebBuildOptions): WebApp {
  return assemble(options, buildSync(esbuildOptions(options)));
}

const esbuildOptions = (options: WebBuildOptions) =>
  ({
    entryPoints: [resolve(REPO_ROOT, options.entry)],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    entryNames: 'assets/[name]-[hash]',
    assetNames: 'assets/[name]-[hash]',
    outdir: '/web-out',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  }) satisfies BuildOptions;

function assemble(options: WebBuildOptions, result: BuildResult<{ write: false }>): WebApp {
  const assets: WebAsset[] = result.outputFiles.map((f) => {
    const path = f.path.slice('/web-out/'.length);
    const ext = path.slice(path.lastIndexOf('.'));
    return {
      path,
      contentType: TYPES[ext] ?? 'application/octet-stream',
      base64: Buffer.from(f.contents).toString('base64'),
      immutable: true,
    };
  });
  const script = assets.find((a) => a.path.endsWith('.js'));
  const style = assets.find((a) => a.path.endsWith('.css'));
  if (!script) throw new Error(`${options.entry}: the build produced no script`);
  const html = [
    '<!doctype html>',
    '<html lang="zh-CN">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(options.title)}</title>`,
    style ? `<link rel="stylesheet" href="${options.basePath}/${style.path}">` : '',
    // Without an icon the browser asks for /favicon.ico, outside the app: a 404 in every page's console.
    '<link rel="icon" href="data:,">',
    `<script type="module" src="${options.basePath}/${script.path}"></script>`,
    '</head>',
    `<body data-base-path="${escapeHtml(options.basePath)}"><noscript>This page needs JavaScript.</noscript></body>`,
    '</html>',
    '',
  ]
    .filter(Boolean)
    .join('\n');
  assets.push({
    path: 'index.html',
    contentType: 'text/html; charset=utf-8',
    base64: Buffer.from(html).toString('base64'),
    immutable: false,
  });
  return { basePath: options.basePath, assets };
}

/** A short digest of the whole app, for logs and cache keys. */
export function webAppDigest(app: WebApp): string {
  const h = createHash('sha256');
  for (const a of app.assets) h.update(`${basename(a.path)}\0${a.base64}\0`);
  return h.digest('hex').slice(0, 12);
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
