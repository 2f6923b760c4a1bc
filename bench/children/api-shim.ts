// Child process for a bundled HTTP function (ingest, callback): the handler behind the local stack's API Gateway
// stand-in (local/api-server.ts), serving exactly the function's rows of ROUTES (and the `$default` route if the
// function owns it), with its timeout and memory — the function's process and nothing of the emulators, simulator
// or load generator. BENCH_FUNCTION names the function, BENCH_HANDLER its bundle. Reports its port over IPC.
import { pathToFileURL } from 'node:url';
import { DEFAULT_ROUTE, FUNCTIONS, type FunctionId, ROUTES } from '#lib/resources/index.js';
import { type HttpApiHandler, startApiServer } from '#local/api-server.js';

const bundle = process.env.BENCH_HANDLER;
const id = process.env.BENCH_FUNCTION as FunctionId | undefined;
if (!bundle || !id || !(id in FUNCTIONS)) throw new Error('BENCH_HANDLER and BENCH_FUNCTION must be set');
const { handler } = (await import(pathToFileURL(bundle).href)) as { handler: HttpApiHandler };
const fn = FUNCTIONS[id];
const routes = ROUTES.filter((r) => r.functionId === id);
if (routes.length === 0) throw new Error(`${id} serves no HTTP route`);

const api = await startApiServer({
  routes: routes.map((r) => ({ method: r.method, path: r.path, handler, functionName: id })),
  ...(DEFAULT_ROUTE.functionId === id ? { fallback: { handler, functionName: id } } : {}),
  functionTimeoutSeconds: fn.timeoutSeconds,
  functionMemoryMb: fn.memoryMb,
});
process.send?.({ ready: true, port: Number(new URL(api.url).port) });
process.on('disconnect', () => process.exit(0));
