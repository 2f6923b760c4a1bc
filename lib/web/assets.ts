/**
 * A browser app (the operator console, the simulator inbox) as the server holds it: a table of files by URL path.
 * The build (./build.ts, esbuild, tooling only) produces it; ./serve.ts answers requests from it, in the ingest
 * function and in the local servers alike.
 */
export interface WebAsset {
  /** Path below the app's base path, without a leading slash: `index.html`, `assets/main-3F2A9C1B.js`. */
  path: string;
  contentType: string;
  /** Base64 of the body: the table crosses a JSON boundary (esbuild `define`) on its way into a bundle. */
  base64: string;
  /** Content-hashed files are cached for a year; `index.html` is revalidated every time. */
  immutable: boolean;
}

export interface WebApp {
  /** URL path the app is mounted at, without a trailing slash: `/console`, `/__sim/ui`. */
  basePath: string;
  assets: WebAsset[];
}
