export { CONSOLE_APP, EMBEDDED_CONSOLE, embeddedConsole, packWebApp, unpackWebApp } from './apps.js';
export type { WebApp, WebAsset } from './assets.js';
export { EMBEDDED_OPENAPI, embeddedOpenApi, packDocument, readOpenApi } from './documents.js';
export { SECURITY_HEADERS, STRICT_CSP, serveWebApp, type WebResponse } from './serve.js';
