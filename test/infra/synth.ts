import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { CfnResource } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { inject } from 'vitest';
import { buildGatewayApp, type GatewayApp } from '../../infra/build-app.js';
import type { GatewayFunction } from '../../infra/constructs/gateway-function.js';
import { cdkJsonContext } from './synth-context.js';
import { type VariantResult, variantKey } from './variants.js';

export { cdkJsonContext } from './synth-context.js';

/** Bundling runs esbuild for every function; CDK assertion tests need a generous timeout. */
export const SYNTH_TIMEOUT_MS = 120_000;

export interface SynthesizedGateway extends GatewayApp {
  readonly template: Template;
}

/**
 * Builds the app as infra/app.ts does (cdk-nag included) with extra `-c` style context. CDK's built-in
 * CloudFormation schema validation is off by default here (it takes ~7 s per synth); nag.test.ts turns it on.
 *
 * The template is this run's synthesis of the variant by test/infra/synth-variants.ts (with bundling, once per
 * `vitest run` for all infra files; test/infra/global-setup.ts starts it). The app and stack returned next to it,
 * for construct lookups (logical ids, annotations), are built here with bundling skipped, and their template
 * must equal the synthesized one apart from the bundles' S3 keys: otherwise this throws. A variant not in
 * INFRA_VARIANTS (test/infra/variants.ts), or a run without the global setup, synthesizes here, with bundling.
 */
export function synthGateway(
  context: Record<string, unknown> = {},
  { schemaValidation = false }: { schemaValidation?: boolean } = {},
): SynthesizedGateway {
  const synthesized = synthesizedVariant(context, schemaValidation);
  if (!synthesized) {
    const built = buildGatewayApp({
      context: { ...cdkJsonContext(), ...context },
      builtinCloudFormationValidation: schemaValidation,
    });
    return { ...built, template: Template.fromStack(built.stack) };
  }
  if ('error' in synthesized)
    throw new Error(`synth failed (test/infra/synth-variants.ts): ${synthesized.error}`);
  const built = buildGatewayApp({
    context: { ...cdkJsonContext(), ...context, [BUNDLING_STACKS]: [] },
    builtinCloudFormationValidation: false,
  });
  const unbundled = Template.fromStack(built.stack).toJSON();
  const expected = withoutBundleKeys(synthesized.template);
  if (JSON.stringify(withoutBundleKeys(unbundled)) !== JSON.stringify(expected)) {
    throw new Error(
      `the stack built for construct lookups differs from its synthesized template beyond the bundles' S3 keys (context ${JSON.stringify(context)})`,
    );
  }
  return { ...built, template: Template.fromJSON(synthesized.template as Record<string, unknown>) };
}

/** CDK's context key naming the stacks to bundle assets for; an empty list bundles none. */
const BUNDLING_STACKS = 'aws:cdk:bundling-stacks';
/** An asset's S3 key: the hash of its bundle, which is all that skipping bundling changes. */
const BUNDLE_KEY = /^[0-9a-f]{64}\.zip$/;

function withoutBundleKeys(template: unknown): unknown {
  return JSON.parse(JSON.stringify(template), (key, value) =>
    key === 'S3Key' && typeof value === 'string' && BUNDLE_KEY.test(value) ? '<bundle>' : value,
  );
}

/** How long a test waits for its variant before synthesizing it itself. */
const VARIANT_WAIT_MS = 100_000;
const pause = new Int32Array(new SharedArrayBuffer(4));

/** This run's result for the variant, waiting for it (synchronously: synthGateway is); undefined: none coming. */
function synthesizedVariant(
  context: Record<string, unknown>,
  schemaValidation: boolean,
): VariantResult | undefined {
  const dir = inject('infraSynthDir');
  if (!dir) return undefined;
  const file = path.join(dir, `${variantKey(context, schemaValidation)}.json`);
  const deadline = Date.now() + VARIANT_WAIT_MS;
  const synthesizeHere = (why: string) => {
    process.stderr.write(
      `synthGateway: ${why} for ${JSON.stringify(context)}: synthesizing it in this process (${path.join(dir, 'synth.log')} has the output of test/infra/synth-variants.ts)\n`,
    );
    return undefined;
  };
  while (!existsSync(file)) {
    const finished = existsSync(path.join(dir, 'done')) || existsSync(path.join(dir, 'exited'));
    if (finished && !existsSync(file)) return synthesizeHere('no variant in test/infra/variants.ts');
    if (Date.now() > deadline) return synthesizeHere(`no result after ${VARIANT_WAIT_MS / 1000} s`);
    Atomics.wait(pause, 0, 0, 50);
  }
  return JSON.parse(readFileSync(file, 'utf8')) as VariantResult;
}

/** The logical id of a GatewayFunction's role, to find the policies attached to it. */
export function roleLogicalId(gateway: GatewayApp, fn: GatewayFunction): string {
  return gateway.stack.getLogicalId(fn.role.node.defaultChild as CfnResource);
}

export function logicalId(gateway: GatewayApp, construct: { node: { defaultChild?: unknown } }): string {
  return gateway.stack.getLogicalId(construct.node.defaultChild as CfnResource);
}

export interface PolicyStatementJson {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
}

/** All statements of the inline policies attached to a role. */
export function statementsOfRole(template: Template, roleId: string): PolicyStatementJson[] {
  const policies = template.findResources('AWS::IAM::Policy');
  return Object.values(policies)
    .filter((p) =>
      (p.Properties.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: roleId })),
    )
    .flatMap((p) => p.Properties.PolicyDocument.Statement as PolicyStatementJson[]);
}

export const actionsOf = (statements: readonly PolicyStatementJson[]): string[] =>
  statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));

export const resourcesOf = (statements: readonly PolicyStatementJson[]): unknown[] =>
  statements.flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]));
