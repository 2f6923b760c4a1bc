import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * What `npm start` keeps in its `.local` directory (git-ignored): the generated config and dev key
 * (local/dev-config.ts), and `stack.json` describing the running stack. Kept free of heavy imports: the operator
 * CLI reads these on every start.
 */
export const DEV_CONFIG_FILE = 'gateway.json';
export const DEV_KEY_FILE = 'dev-api-key';
export const STACK_INFO_FILE = 'stack.json';

/**
 * `.local/stack.json`: where a running `npm start` listens, so the operator CLI (`wecom-gateway send`, `status`)
 * finds it without flags even on a non-default PORT. Written when the stack is ready, removed when it stops.
 */
export interface StackInfo {
  apiUrl: string;
  simulatorUrl?: string;
  /**
   * The emulators, table and queues (every queue of lib/resources `QUEUES`, by id), for the CLI's queue depths and
   * DLQ tools. Absent in files written before it existed.
   */
  aws?: {
    region: string;
    dynamoEndpoint: string;
    sqsEndpoint: string;
    tableName: string;
    queueUrls: Record<string, string>;
  };
  /** The `npm start` process; a file left behind by a killed process is recognised by its dead pid. */
  pid: number;
}

export async function writeStackInfo(dir: string, info: StackInfo): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, STACK_INFO_FILE), `${JSON.stringify(info, null, 2)}\n`);
}

/** Removes the file only if it still describes this process (another `npm start` may have replaced it). */
export async function removeStackInfo(dir: string, pid = process.pid): Promise<void> {
  if ((await readStackInfo(dir, { requireLive: false }))?.pid === pid) {
    await rm(join(dir, STACK_INFO_FILE), { force: true });
  }
}

/** The stack described in `dir`, or undefined when there is none (or, with `requireLive`, its process is gone). */
export async function readStackInfo(
  dir: string,
  { requireLive = true }: { requireLive?: boolean } = {},
): Promise<StackInfo | undefined> {
  let info: Partial<StackInfo>;
  try {
    info = JSON.parse(await readFile(join(dir, STACK_INFO_FILE), 'utf8')) as Partial<StackInfo>;
  } catch {
    return undefined;
  }
  if (typeof info.apiUrl !== 'string' || typeof info.pid !== 'number') return undefined;
  if (requireLive && !isAlive(info.pid)) return undefined;
  return info as StackInfo;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
