import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { DEFAULT_SENDER_CONCURRENCY, DEFAULT_WECOM_API_BASE } from '#lib/resources/index.js';

export type Egress = 'default' | 'fixed';

/** Deployment parameters, read from CDK context (`-c key=value` or cdk.json). */
export interface GatewayContext {
  /** Suffix of the stack name; `prod` turns on deletion protection and RETAIN. */
  readonly stage: string;
  /** Sender reserved concurrency, split across the lanes by `senderEventSources()`. */
  readonly senderConcurrency: number;
  /** `fixed`: the sender egresses through one NAT gateway with an Elastic IP (WeCom 可信IP). */
  readonly egress: Egress;
  /** Alarm notifications go to this address (SNS email subscription) when set. */
  readonly alarmEmail?: string;
  readonly logRetentionDays: RetentionDays;
  readonly apiBurstLimit: number;
  readonly apiRateLimit: number;
  /** Where the sender calls WeCom; override for a proxy in front of qyapi. */
  readonly wecomApiBase: string;
}

export const CONTEXT_DEFAULTS = {
  stage: 'dev',
  senderConcurrency: DEFAULT_SENDER_CONCURRENCY,
  egress: 'default',
  logRetentionDays: RetentionDays.ONE_MONTH,
  apiBurstLimit: 200,
  apiRateLimit: 100,
  wecomApiBase: DEFAULT_WECOM_API_BASE,
} as const satisfies Omit<GatewayContext, 'alarmEmail'>;

const VALID_RETENTION_DAYS = new Set<number>(
  Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'),
);

class ContextError extends Error {
  constructor(key: string, expected: string, got: unknown) {
    super(`context '${key}' must be ${expected}, got ${JSON.stringify(got)}`);
    this.name = 'ContextError';
  }
}

// `-c key=value` always arrives as a string; cdk.json and `new App({ context })` keep JSON types.
function readInt(scope: Construct, key: string, fallback: number, min: number): number {
  const raw: unknown = scope.node.tryGetContext(key);
  if (raw === undefined) return fallback;
  const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new ContextError(key, `an integer >= ${min}`, raw);
  }
  return value;
}

function readString(scope: Construct, key: string): string | undefined {
  const raw: unknown = scope.node.tryGetContext(key);
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string') throw new ContextError(key, 'a string', raw);
  return raw;
}

/** Reads and validates the gateway's context; a bad value fails synth with the key's name. */
export function readGatewayContext(scope: Construct): GatewayContext {
  const stage = readString(scope, 'stage') ?? CONTEXT_DEFAULTS.stage;
  // Used in the stack name, alarm names and the secret name.
  if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage)) {
    throw new ContextError(
      'stage',
      'lowercase letters, digits and dashes (max 20, starting with a letter)',
      stage,
    );
  }
  const egress = readString(scope, 'egress') ?? CONTEXT_DEFAULTS.egress;
  if (egress !== 'default' && egress !== 'fixed')
    throw new ContextError('egress', "'default' or 'fixed'", egress);
  const alarmEmail = readString(scope, 'alarmEmail');
  if (alarmEmail !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(alarmEmail)) {
    throw new ContextError('alarmEmail', 'an email address', alarmEmail);
  }
  const logRetentionDays = readInt(scope, 'logRetentionDays', CONTEXT_DEFAULTS.logRetentionDays, 1);
  if (!VALID_RETENTION_DAYS.has(logRetentionDays)) {
    throw new ContextError(
      'logRetentionDays',
      `one of ${[...VALID_RETENTION_DAYS].join(', ')}`,
      logRetentionDays,
    );
  }
  const wecomApiBase = readString(scope, 'wecomApiBase') ?? CONTEXT_DEFAULTS.wecomApiBase;
  if (!wecomApiBase.startsWith('https://'))
    throw new ContextError('wecomApiBase', 'an https URL', wecomApiBase);

  return {
    stage,
    senderConcurrency: readInt(scope, 'senderConcurrency', CONTEXT_DEFAULTS.senderConcurrency, 1),
    egress,
    ...(alarmEmail !== undefined && { alarmEmail }),
    logRetentionDays: logRetentionDays as RetentionDays,
    apiBurstLimit: readInt(scope, 'apiBurstLimit', CONTEXT_DEFAULTS.apiBurstLimit, 1),
    apiRateLimit: readInt(scope, 'apiRateLimit', CONTEXT_DEFAULTS.apiRateLimit, 1),
    wecomApiBase,
  };
}
