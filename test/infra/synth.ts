import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { CfnResource } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildGatewayApp, type GatewayApp } from '../../infra/build-app.js';
import { REPO_ROOT } from '../../infra/constructs/bundling.js';
import type { GatewayFunction } from '../../infra/constructs/gateway-function.js';

/** Bundling runs esbuild for every function; CDK assertion tests need a generous timeout. */
export const SYNTH_TIMEOUT_MS = 120_000;

/** The feature flags and defaults from cdk.json, so tests synthesize what `cdk synth` does. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(path.join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return cdkJson.context ?? {};
}

export interface SynthesizedGateway extends GatewayApp {
  readonly template: Template;
}

/**
 * Builds the app as infra/app.ts does (cdk-nag included) with extra `-c` style context. CDK's built-in
 * CloudFormation schema validation is off by default here (it takes ~7 s per synth); nag.test.ts keeps it on.
 */
export function synthGateway(
  context: Record<string, unknown> = {},
  { schemaValidation = false }: { schemaValidation?: boolean } = {},
): SynthesizedGateway {
  const built = buildGatewayApp({
    context: { ...cdkJsonContext(), ...context },
    builtinCloudFormationValidation: schemaValidation,
  });
  return { ...built, template: Template.fromStack(built.stack) };
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
