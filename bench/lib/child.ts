/**
 * Child processes that run a bundled function the way Lambda does: bare `node` (no tsx), `NODE_OPTIONS` as the
 * CDK construct sets it, and only the environment the deployed function gets, pointed at the local stack.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { LocalStack } from '#local/stack.js';

/**
 * What a function process needs of a stack: its table, queues, config and endpoints. The in-process local stack
 * has it, and so has the bench's stack of emulators in processes of their own (bench/lib/isolated.ts).
 */
export type FunctionStack = Pick<LocalStack, 'env' | 'wecomApiBase' | 'sqsEndpoint' | 'resources'> & {
  readonly dynamoRequests: { readonly endpoint: string };
};

/**
 * infra/constructs/gateway-function.ts sets no NODE_OPTIONS (stack traces are mapped when an error is logged, not by
 * --enable-source-maps at every cold start) and LOG_LEVEL=info.
 */
export const LAMBDA_NODE_OPTIONS = '';

/** The variables the deployed functions read (lib/config/env.ts), with the stack's emulators as endpoints. */
export function functionEnv(
  stack: FunctionStack,
  extra: Record<string, string> = {},
): Record<string, string> {
  const configFile = stack.env.configFile;
  if (!configFile) throw new Error('the stack has no config file');
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    NODE_OPTIONS: LAMBDA_NODE_OPTIONS,
    TABLE_NAME: stack.env.tableName,
    QUEUE_URL_HIGH: stack.env.queueUrls.high,
    QUEUE_URL_NORMAL: stack.env.queueUrls.normal,
    // CDK gives every function the notify queue (callback and notify cannot start without it), notify its DLQ.
    NOTIFY_QUEUE_URL: stack.resources.queueUrls.notify,
    NOTIFY_DLQ_URL: stack.resources.queueUrls['notify-dlq'],
    GATEWAY_CONFIG: configFile,
    WECOM_API_BASE: stack.wecomApiBase,
    LOG_LEVEL: 'info',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    // Through the stack's request counter, like the in-process functions.
    AWS_ENDPOINT_URL_DYNAMODB: stack.dynamoRequests.endpoint,
    AWS_ENDPOINT_URL_SQS: stack.sqsEndpoint,
    ...extra,
  };
}

/** Runs `node script args…` to completion (bounded) and returns its stdout. */
export async function runNode(
  script: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 20_000,
): Promise<string> {
  const child = spawn(process.execPath, [script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString('utf8');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${script} exited ${code}: ${err.trim().slice(0, 500)}`);
  return out;
}

/**
 * Starts `node [execArgv…] script` with an IPC channel; stdout is counted (the function's log bytes) and dropped.
 * `execArgv`: node flags for this process only (e.g. `--cpu-prof`), beside the Lambda-like NODE_OPTIONS in `env`.
 */
export function startNode(
  script: string,
  env: Record<string, string>,
  execArgv: readonly string[] = [],
): { child: ChildProcess; stdoutBytes: () => number; stderr: () => string } {
  const child = spawn(process.execPath, [...execArgv, script], {
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let bytes = 0;
  let err = '';
  child.stdout?.on('data', (c: Buffer) => {
    bytes += c.length;
  });
  child.stderr?.on('data', (c: Buffer) => {
    if (err.length < 4_000) err += c.toString('utf8');
  });
  return { child, stdoutBytes: () => bytes, stderr: () => err };
}

/** Waits for the first IPC message matching `pred` (bounded). */
export function nextMessage<T>(
  child: ChildProcess,
  pred: (m: unknown) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`no IPC message from child within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (m: unknown) => {
      if (!pred(m)) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(m as T);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited (${code}) before answering`));
    });
  });
}

/**
 * Peak and current resident set size of a process from /proc (VmHWM is the kernel's high-water mark of RSS —
 * exactly "peak RSS", nothing sampled). Linux only; undefined elsewhere.
 */
export async function memoryOf(pid: number): Promise<{ peakBytes: number; rssBytes: number } | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { peakBytes: kb('VmHWM') * 1024, rssBytes: kb('VmRSS') * 1024 };
  } catch {
    return undefined;
  }
}

/**
 * Ends a child: disconnects its IPC channel (the children exit on `disconnect`), then SIGTERM, SIGKILL after 3 s.
 * `graceMs`: how long to wait for the child to exit by itself before the signal — a process started with
 * `--cpu-prof` writes its profile only when it exits normally.
 */
export async function stopChild(child: ChildProcess, opts: { graceMs?: number } = {}): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.connected) child.disconnect();
  if (opts.graceMs) {
    const grace = new Promise<'grace'>((resolve) => setTimeout(() => resolve('grace'), opts.graceMs).unref());
    if ((await Promise.race([exited, grace])) !== 'grace') return;
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  child.kill('SIGTERM');
  await exited;
  clearTimeout(timer);
}

/** CPU time (user + system) a process has used so far, ms, from /proc/<pid>/stat (clock ticks of 10 ms). */
export async function cpuMsOf(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start at index 2 = state; utime is field 14, stime 15.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]);
    return ticks * 10;
  } catch {
    return Number.NaN;
  }
}
