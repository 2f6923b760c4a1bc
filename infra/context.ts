import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { DEFAULT_SENDER_CONCURRENCY, DEFAULT_WECOM_API_BASE } from '#lib/resources/index.js';

export type Egress = 'default' | 'fixed';
export type Tracing = 'off' | 'active';

/**
 * Deployment parameters of one stage. Each comes from, in order: CDK context (`-c key=value`, or cdk.json
 * "context"), the stage's entry in the stages file (`infra/stages.json`), then {@link CONTEXT_DEFAULTS}.
 */
export interface GatewayContext {
  /** Suffix of the stack name; `prod` turns on deletion protection and RETAIN. */
  readonly stage: string;
  /** Sender reserved concurrency, split across the lanes by `senderEventSources()`. */
  readonly senderConcurrency: number;
  /** `fixed`: the sender egresses through one NAT gateway with an Elastic IP (WeCom 可信IP). */
  readonly egress: Egress;
  /**
   * With `egress: fixed`: an Elastic IP allocation to use instead of a new one, e.g. the one a torn-down stack
   * left behind (`eipalloc-…`), so the IP already on WeCom's trusted lists stays the gateway's.
   */
  readonly eipAllocationId?: string;
  /** Alarm notifications go to this address (SNS email subscription) when set. */
  readonly alarmEmail?: string;
  readonly logRetentionDays: RetentionDays;
  readonly apiBurstLimit: number;
  readonly apiRateLimit: number;
  /** Route-level throttle of each hook and push route (ROUTES rows with `throttle: 'inbound'`). */
  readonly hookBurstLimit: number;
  readonly hookRateLimit: number;
  /** Route-level throttle of WeCom's callback routes (ROUTES rows with `throttle: 'callback'`). */
  readonly callbackBurstLimit: number;
  readonly callbackRateLimit: number;
  /** Hook names that get a route, and so a throttle, of their own (`-c hookRoutes=prom,github`). */
  readonly hookRoutes: readonly string[];
  /** Where every function that calls WeCom calls it; override for a proxy in front of qyapi. */
  readonly wecomApiBase: string;
  /** `active`: Lambda active tracing (X-Ray) on every function. */
  readonly tracing: Tracing;
}

export const CONTEXT_DEFAULTS = {
  stage: 'dev',
  senderConcurrency: DEFAULT_SENDER_CONCURRENCY,
  egress: 'default',
  logRetentionDays: RetentionDays.ONE_MONTH,
  apiBurstLimit: 200,
  apiRateLimit: 100,
  // A vendor's storm (an outage that fires every alert group at once) stays within its route's budget. Alertmanager
  // retries a 429; GitHub does not, and GitLab disables a webhook after a few 4xx in a row: keep headroom.
  hookBurstLimit: 50,
  hookRateLimit: 10,
  // WeCom's callbacks come at the pace of the corp's people (a card sent to a department, everyone answering at
  // once). The callback function answers one in ~5–7 ms of CPU (bench callback-isolated): 500/s keeps a few
  // containers busy; a 429 there costs one of WeCom's 3 tries of that callback.
  callbackBurstLimit: 1000,
  callbackRateLimit: 500,
  hookRoutes: [],
  wecomApiBase: DEFAULT_WECOM_API_BASE,
  tracing: 'off',
} as const satisfies Omit<GatewayContext, 'alarmEmail' | 'eipAllocationId'>;

/** The committed per-stage settings; `-c stagesFile=<path>` reads another file. */
export const DEFAULT_STAGES_FILE = path.join(import.meta.dirname, 'stages.json');

/** Keys a stage entry may set (everything but the stage name itself). */
export const SETTING_KEYS: ReadonlySet<string> = new Set<string>([
  'senderConcurrency',
  'egress',
  'eipAllocationId',
  'alarmEmail',
  'logRetentionDays',
  'apiBurstLimit',
  'apiRateLimit',
  'hookBurstLimit',
  'hookRateLimit',
  'callbackBurstLimit',
  'callbackRateLimit',
  'hookRoutes',
  'wecomApiBase',
  'tracing',
]);

const STAGE_NAME = /^[a-z][a-z0-9-]{0,19}$/;

const VALID_RETENTION_DAYS = new Set<number>(
  Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'),
);

export class ContextError extends Error {
  override readonly name = 'ContextError';
}

const invalid = (key: string, expected: string, got: unknown) =>
  new ContextError(`context '${key}' must be ${expected}, got ${JSON.stringify(got)}`);

type Settings = Readonly<Record<string, unknown>>;

/** Reads the stages file: `{ "<stage>": { <setting>: value, … }, … }`; keys starting with `$` are comments. */
export function readStagesFile(file: string): Readonly<Record<string, Settings>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ContextError(`cannot read stages file ${file}: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ContextError(`stages file ${file} must hold an object of stages`);
  }
  const stages: Record<string, Settings> = {};
  for (const [stage, settings] of Object.entries(parsed)) {
    if (stage.startsWith('$')) continue;
    if (!STAGE_NAME.test(stage))
      throw new ContextError(`stages file ${file}: '${stage}' is not a stage name`);
    if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
      throw new ContextError(`stages file ${file}: stage '${stage}' must be an object of settings`);
    }
    const unknown = Object.keys(settings).filter((k) => !SETTING_KEYS.has(k));
    if (unknown.length > 0) {
      throw new ContextError(
        `stages file ${file}: stage '${stage}' has unknown setting(s) ${unknown.join(', ')}; ` +
          `known: ${[...SETTING_KEYS].join(', ')}`,
      );
    }
    stages[stage] = settings as Settings;
  }
  return stages;
}

/** `-c key=value` always arrives as a string; cdk.json, the stages file and `new App({ context })` keep JSON types. */
function settingsReader(scope: Construct, fileSettings: Settings) {
  const raw = (key: string): unknown => scope.node.tryGetContext(key) ?? fileSettings[key];
  const int = (key: string, fallback: number, min: number): number => {
    const value = raw(key);
    if (value === undefined) return fallback;
    const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min)
      throw invalid(key, `an integer >= ${min}`, value);
    return n;
  };
  const str = (key: string): string | undefined => {
    const value = raw(key);
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw invalid(key, 'a string', value);
    return value;
  };
  const oneOf = <T extends string>(key: string, allowed: readonly T[], fallback: T): T => {
    const value = str(key) ?? fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      throw invalid(key, allowed.map((a) => `'${a}'`).join(' or '), value);
    }
    return value as T;
  };
  return { raw, int, str, oneOf };
}

const isTrue = (value: unknown) => value === true || value === 'true';

/**
 * A deploy that would drop a stage's fixed egress deletes its NAT gateway and leaves the gateway calling WeCom
 * from changing Lambda IPs (errcode 60020 for every message): only with an explicit `-c allowEgressChange=true`.
 * The stages file is the truth, so only a `-c` override can take egress away; editing the file is explicit.
 */
function assertEgressKept(
  scope: Construct,
  stage: string,
  fileSettings: Settings,
  egress: Egress,
  file: string,
) {
  if (fileSettings.egress !== 'fixed' || egress === 'fixed') return;
  if (isTrue(scope.node.tryGetContext('allowEgressChange'))) return;
  const where = path.relative(process.cwd(), file) || file;
  throw new ContextError(
    `stage '${stage}' has egress 'fixed' in ${where}, but this deploy asks for egress '${egress}': ` +
      "that would delete the NAT gateway, and WeCom would reject the sender's calls from other IPs (errcode " +
      `60020). Pass -c allowEgressChange=true if you mean it, or change the stage in ${where}.`,
  );
}

/** `prom,github` (a `-c` string) or `["prom","github"]` (cdk.json, stages file): hook names as config allows them. */
function parseHookRoutes(raw: unknown): string[] {
  if (raw === undefined || raw === null || raw === '') return [];
  const names = typeof raw === 'string' ? raw.split(',').map((n) => n.trim()) : raw;
  if (
    !Array.isArray(names) ||
    !names.every((n) => typeof n === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(n))
  ) {
    throw invalid('hookRoutes', 'hook names (1-64 of [A-Za-z0-9_-]), comma-separated', raw);
  }
  return [...new Set(names as string[])];
}

/** Reads and validates the gateway's settings; a bad value fails synth with the key's name. */
export function readGatewayContext(scope: Construct): GatewayContext {
  const stage = (scope.node.tryGetContext('stage') as unknown) ?? CONTEXT_DEFAULTS.stage;
  // Used in the stack name, alarm names and the secret name.
  if (typeof stage !== 'string' || !STAGE_NAME.test(stage)) {
    throw invalid('stage', 'lowercase letters, digits and dashes (max 20, starting with a letter)', stage);
  }
  const explicitFile = scope.node.tryGetContext('stagesFile') as unknown;
  if (explicitFile !== undefined && typeof explicitFile !== 'string')
    throw invalid('stagesFile', 'a path', explicitFile);
  const file = explicitFile ? path.resolve(explicitFile) : DEFAULT_STAGES_FILE;
  const stages = explicitFile || existsSync(file) ? readStagesFile(file) : {};
  const fileSettings = stages[stage] ?? {};
  const read = settingsReader(scope, fileSettings);

  const egress = read.oneOf<Egress>('egress', ['default', 'fixed'], CONTEXT_DEFAULTS.egress);
  assertEgressKept(scope, stage, fileSettings, egress, file);
  const eipAllocationId = read.str('eipAllocationId');
  if (eipAllocationId !== undefined && !/^eipalloc-[0-9a-f]{8,17}$/.test(eipAllocationId)) {
    throw invalid('eipAllocationId', 'an Elastic IP allocation id (eipalloc-…)', eipAllocationId);
  }
  if (eipAllocationId !== undefined && egress !== 'fixed') {
    throw new ContextError(
      `context 'eipAllocationId' needs egress 'fixed' (stage '${stage}' has '${egress}')`,
    );
  }
  const alarmEmail = read.str('alarmEmail');
  if (alarmEmail !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(alarmEmail)) {
    throw invalid('alarmEmail', 'an email address', alarmEmail);
  }
  const logRetentionDays = read.int('logRetentionDays', CONTEXT_DEFAULTS.logRetentionDays, 1);
  if (!VALID_RETENTION_DAYS.has(logRetentionDays)) {
    throw invalid('logRetentionDays', `one of ${[...VALID_RETENTION_DAYS].join(', ')}`, logRetentionDays);
  }
  const wecomApiBase = read.str('wecomApiBase') ?? CONTEXT_DEFAULTS.wecomApiBase;
  if (!wecomApiBase.startsWith('https://')) throw invalid('wecomApiBase', 'an https URL', wecomApiBase);

  return {
    stage,
    senderConcurrency: read.int('senderConcurrency', CONTEXT_DEFAULTS.senderConcurrency, 1),
    egress,
    ...(eipAllocationId !== undefined && { eipAllocationId }),
    ...(alarmEmail !== undefined && { alarmEmail }),
    logRetentionDays: logRetentionDays as RetentionDays,
    apiBurstLimit: read.int('apiBurstLimit', CONTEXT_DEFAULTS.apiBurstLimit, 1),
    apiRateLimit: read.int('apiRateLimit', CONTEXT_DEFAULTS.apiRateLimit, 1),
    hookBurstLimit: read.int('hookBurstLimit', CONTEXT_DEFAULTS.hookBurstLimit, 1),
    hookRateLimit: read.int('hookRateLimit', CONTEXT_DEFAULTS.hookRateLimit, 1),
    callbackBurstLimit: read.int('callbackBurstLimit', CONTEXT_DEFAULTS.callbackBurstLimit, 1),
    callbackRateLimit: read.int('callbackRateLimit', CONTEXT_DEFAULTS.callbackRateLimit, 1),
    hookRoutes: parseHookRoutes(read.raw('hookRoutes')),
    wecomApiBase,
    tracing: read.oneOf<Tracing>('tracing', ['off', 'active'], CONTEXT_DEFAULTS.tracing),
  };
}
