import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The stack variants the infra tests synthesize (the `-c` style context each passes to `synthGateway`).
 * test/infra/global-setup.ts has each synthesized once per `vitest run`, with bundling, in a process of its own;
 * a variant missing here still works (synthGateway then synthesizes it in the test's own process, slowly).
 */
export interface InfraVariant {
  readonly context: Record<string, unknown>;
  /** Contents of a stages file: the synthesizing process writes it to a file and passes that as `stagesFile`. */
  readonly stagesFile?: unknown;
  /** CDK's CloudFormation schema validation on, as in `cdk synth` (nag.test.ts). */
  readonly schemaValidation?: boolean;
}

export const INFRA_VARIANTS: readonly InfraVariant[] = [
  { context: {} },
  { context: { stage: 'prod' } },
  { context: { egress: 'fixed' } },
  { context: { stage: 'prod', egress: 'fixed' } },
  { context: { stage: 'prod', egress: 'fixed', alarmEmail: 'ops@example.com' } },
  { context: { stage: 'prod', egress: 'fixed', tracing: 'active' } },
  { context: { egress: 'fixed', eipAllocationId: 'eipalloc-0123456789abcdef0' } },
  {
    context: { stage: 'prod' },
    stagesFile: { prod: { egress: 'fixed', wecomApiBase: 'https://wecom-proxy.example.com' } },
  },
  { context: { apiBurstLimit: '50', apiRateLimit: '25' } },
  { context: { callbackBurstLimit: '800', callbackRateLimit: '400' } },
  { context: { hookRoutes: 'prom,github', hookBurstLimit: '20', hookRateLimit: '5' } },
  { context: { senderConcurrency: '9' } },
  { context: {}, schemaValidation: true },
  {
    context: { stage: 'prod', egress: 'fixed', tracing: 'active', alarmEmail: 'ops@example.com' },
    schemaValidation: true,
  },
];

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` name the same variant. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
  );
}

/** What a stages file holds: parsed JSON, or its text when it is not JSON. */
function stagesFileContents(file: string): unknown {
  const text = readFileSync(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch {
    return { unparsed: text };
  }
}

/**
 * The name of a variant's synthesized result: a hash of its context (a stages file by its contents, not its path)
 * and of the schema validation flag. Everything else the template depends on (sources, cdk.json, infra/stages.json)
 * is the same for the whole run, since every result is made during this run.
 */
export function variantKey(context: Record<string, unknown>, schemaValidation: boolean): string {
  const { stagesFile, ...rest } = context;
  const described = {
    context: rest,
    stagesFile: typeof stagesFile === 'string' ? stagesFileContents(stagesFile) : (stagesFile ?? null),
    schemaValidation,
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(described)))
    .digest('hex')
    .slice(0, 32);
}

/** What the synthesizing process writes for one variant: the template, or why synth failed. */
export type VariantResult = { readonly template: unknown } | { readonly error: string };
