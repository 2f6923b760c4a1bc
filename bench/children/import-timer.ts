// Child process for the cold-init figure: times `await import(bundle)` in a fresh Node process, the way the Lambda
// runtime loads a handler (module evaluation including the top-level await that builds clients and loads config).
import { pathToFileURL } from 'node:url';

const file = process.argv[2];
if (!file) throw new Error('usage: import-timer.mjs <bundle.mjs>');
const started = performance.now();
const mod = (await import(pathToFileURL(file).href)) as { handler?: unknown };
const importMs = performance.now() - started;
process.stdout.write(
  `${JSON.stringify({
    importMs,
    // performance.now() counts from process start: Node's own bootstrap plus the import.
    sinceProcessStartMs: performance.now(),
    hasHandler: typeof mod.handler === 'function',
    rssBytes: process.memoryUsage().rss,
  })}\n`,
);
// The handler's clients keep sockets and timers; Lambda would freeze the process here.
process.exit(0);
