/**
 * The local stack taken apart: DynamoDB, SQS and the WeCom simulator each in a node process of its own
 * (bench/children/emulator.ts), the table and queues provisioned as `npm start` does, a config with one app and one
 * key. The gateway's functions then run as bundled processes of their own too (bench/lib/functions.ts), so no
 * figure measured on it is a shared event loop's: each process's CPU can be read on its own, and a ratio is limited
 * by whichever process (or the machine's cores) saturates first — which the metric reports.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PurgeQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { GatewayConfig, GatewayEnv } from '#lib/config/index.js';
import { devConfig, newDevKey } from '#local/dev-config.js';
import { type ProvisionedResources, provision } from '#local/provision.js';
import { LOCAL_REGION } from '#local/stack.js';
import type { SimLimits } from '#local/wecom-sim/index.js';
import { REPO_ROOT } from '../../infra/constructs/esbuild-options.js';
import { cpuMsOf, type FunctionStack, nextMessage, stopChild } from './child.js';
import { fmt, sleep } from './harness.js';

export type EmulatorKind = 'dynamodb' | 'sqs' | 'sim';

export interface EmulatorProcess {
  readonly kind: EmulatorKind;
  readonly endpoint: string;
  readonly child: ChildProcess;
  cpuMs(): Promise<number>;
}

export interface IsolatedStack {
  /** What the function processes need (table, queues, config file, endpoints). */
  readonly stack: FunctionStack;
  readonly key: string;
  readonly config: GatewayConfig;
  readonly simUrl: string;
  readonly emulators: Record<EmulatorKind, EmulatorProcess>;
  readonly sqs: SQSClient;
  stop(): Promise<void>;
}

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

async function startEmulator(kind: EmulatorKind, env: Record<string, string> = {}): Promise<EmulatorProcess> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--disable-warning=ExperimentalWarning',
      join('bench', 'children', 'emulator.ts'),
      kind,
    ],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    },
  );
  let err = '';
  child.stderr?.on('data', (c: Buffer) => {
    if (err.length < 2_000) err += c.toString('utf8');
  });
  try {
    const { endpoint } = await nextMessage<{ endpoint: string }>(
      child,
      (m) => (m as { ready?: boolean }).ready === true,
      30_000,
    );
    return { kind, endpoint, child, cpuMs: () => cpuMsOf(child.pid as number) };
  } catch (e) {
    await stopChild(child);
    throw new Error(`${kind} emulator did not start: ${err.slice(0, 400)}`, { cause: e });
  }
}

export interface IsolatedStackOptions {
  readonly simLatencyMs: number;
  /** The simulator's limits on top of WeCom's (e.g. app calls far above what a run reaches). */
  readonly simLimits?: Partial<SimLimits>;
}

export async function startIsolatedStack(opts: IsolatedStackOptions): Promise<IsolatedStack> {
  const started: EmulatorProcess[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'wgw-bench-isolated-'));
  try {
    const key = newDevKey();
    const config = devConfig(key);
    const [dynamodb, sqsEmu, sim] = await Promise.all([
      startEmulator('dynamodb'),
      startEmulator('sqs'),
      startEmulator('sim', {
        BENCH_SIM_OPTIONS: JSON.stringify({
          latencyMs: opts.simLatencyMs,
          ...(opts.simLimits ? { limits: opts.simLimits } : {}),
          apps: Object.values(config.apps).map((a) => ({
            corpId: a.corpId,
            secret: a.secret,
            agentId: a.agentId,
          })),
        }),
      }),
    ]);
    started.push(dynamodb, sqsEmu, sim);
    const dynamo = new DynamoDBClient({ region: LOCAL_REGION, endpoint: dynamodb.endpoint, credentials });
    const sqs = new SQSClient({ region: LOCAL_REGION, endpoint: sqsEmu.endpoint, credentials });
    const resources: ProvisionedResources = await provision({ dynamo, sqs });
    dynamo.destroy();
    const configFile = join(dir, 'gateway.json');
    await writeFile(configFile, JSON.stringify(config), { mode: 0o600 });
    const env: GatewayEnv = {
      tableName: resources.tableName,
      queueUrls: { high: resources.queueUrls.high, normal: resources.queueUrls.normal },
      wecomApiBase: sim.endpoint,
      configFile,
      logLevel: 'info',
      stage: 'local',
      region: LOCAL_REGION,
    };
    return {
      stack: {
        env,
        wecomApiBase: sim.endpoint,
        sqsEndpoint: sqsEmu.endpoint,
        resources,
        dynamoRequests: { endpoint: dynamodb.endpoint },
      },
      key: key.key,
      config,
      simUrl: sim.endpoint,
      emulators: { dynamodb, sqs: sqsEmu, sim },
      sqs,
      stop: async () => {
        sqs.destroy();
        await Promise.all(started.map((e) => stopChild(e.child)));
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await Promise.all(started.map((e) => stopChild(e.child)));
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * A copy of the stack's config whose every app has `quota` on top of its own, written to `dir`; a function process
 * started with `GATEWAY_CONFIG` set to the returned path runs with it.
 */
export async function writeConfigWithQuota(
  iso: Pick<IsolatedStack, 'config'>,
  dir: string,
  name: string,
  quota: Partial<GatewayConfig['apps'][string]['quota']>,
): Promise<string> {
  const config: GatewayConfig = {
    ...iso.config,
    apps: Object.fromEntries(
      Object.entries(iso.config.apps).map(([id, app]) => [id, { ...app, quota: { ...app.quota, ...quota } }]),
    ),
  };
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(config), { mode: 0o600 });
  return file;
}

/**
 * CPU time of several processes, sampled together: `since()` gives each one's cores used since the mark, and
 * `machine` the cores busy on the whole machine (from /proc/stat) — on a shared machine, others' work too.
 */
export async function cpuMark(procs: Record<string, () => Promise<number>>) {
  const t0 = Date.now();
  const entries = Object.entries(procs);
  const before = await Promise.all(entries.map(([, f]) => f()));
  const machine0 = await machineBusyMs();
  return {
    async since(): Promise<Record<string, number>> {
      const after = await Promise.all(entries.map(([, f]) => f()));
      const elapsed = Math.max(1, Date.now() - t0);
      const cores = (ms: number) => Math.round((ms / elapsed) * 100) / 100;
      return {
        ...Object.fromEntries(
          entries.map(([name], i) => [name, cores((after[i] as number) - (before[i] as number))]),
        ),
        machine: cores((await machineBusyMs()) - machine0),
      };
    },
  };
}

/** Busy CPU time of the whole machine so far, ms (all cores: user, nice, system, irq, softirq, steal). */
async function machineBusyMs(): Promise<number> {
  try {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    // USER_HZ is 100 on Linux: one tick = 10 ms.
    return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 10;
  } catch {
    return Number.NaN;
  }
}

/**
 * Empties the sender's lanes (what a drain that timed out left), then waits out the purge (SQS: up to 60 s; fauxqs:
 * at once, so a short pause).
 */
export async function purgeLanes(iso: IsolatedStack): Promise<void> {
  for (const url of [iso.stack.env.queueUrls.normal, iso.stack.env.queueUrls.high]) {
    await iso.sqs.send(new PurgeQueueCommand({ QueueUrl: url })).catch(() => undefined);
  }
  await sleep(200);
}

/** CPU-time readers of the stack's emulators and of this bench process (load generator, pollers), for cpuMark. */
export function emulatorCpu(iso: IsolatedStack): Record<string, () => Promise<number>> {
  return {
    dynamodb: () => iso.emulators.dynamodb.cpuMs(),
    sqs: () => iso.emulators.sqs.cpuMs(),
    simulator: () => iso.emulators.sim.cpuMs(),
    'bench (load, poller)': async () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    },
  };
}

/**
 * What saturated: the machine's cores when (nearly) all are busy — by this bench's processes or, on a shared
 * machine, by others' — else a process whose event loop is full, else nothing CPU-bound (round trips).
 */
export function limiter(cores: Record<string, number>): string {
  const { machine = Number.NaN, ...ours } = cores;
  const total = Object.values(ours).reduce((a, b) => a + b, 0);
  const [busiest, busiestCores] = Object.entries(ours).sort((a, b) => b[1] - a[1])[0] ?? ['?', 0];
  const n = cpus().length;
  if (machine >= n * 0.85 || total >= n * 0.85)
    return `the machine's ${n} cores (${fmt(machine, 2)} busy, ${fmt(total, 2)} of it this bench's; busiest: ${busiest} ${fmt(busiestCores, 2)})`;
  if (busiestCores >= 0.9) return `the ${busiest} process's event loop (${fmt(busiestCores, 2)} cores)`;
  return `no CPU (${fmt(total, 2)} cores busy here, ${fmt(machine, 2)} on the machine): round trips`;
}

export const fmtCores = (cores: Record<string, number>) =>
  Object.entries(cores)
    .map(([k, v]) => `${k} ${fmt(v, 2)}`)
    .join(', ');

/**
 * The vCPU share of a Lambda function with `memoryMb`: Lambda allocates CPU in proportion to memory, one vCPU at
 * 1,769 MB ([Memory and computing power](https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html)).
 * What a function's measured CPU per unit of work turns into on AWS.
 */
export const lambdaVcpu = (memoryMb: number): number => memoryMb / 1_769;
