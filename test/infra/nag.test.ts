import { Stack } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { buildGatewayApp } from '../../infra/build-app.js';
import { cdkJsonContext, SYNTH_TIMEOUT_MS, synthGateway } from './synth.js';

// Under vitest (NODE_ENV=test) CDK synthesizes "in memory" and throws on any failed validation report,
// so a clean synth means no unacknowledged cdk-nag finding. CloudFormation schema validation stays on for the
// gateway's stacks, as in `cdk synth`.
/** This run's synthesis of a variant with schema validation (test/infra/synth.ts); throws as its synth did. */
const synth = (context: Record<string, unknown> = {}) => synthGateway(context, { schemaValidation: true });

describe('cdk-nag AwsSolutions', () => {
  it(
    'reports no unacknowledged finding for the default stack',
    () => {
      expect(() => synth()).not.toThrow();
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'reports no unacknowledged finding for prod with fixed egress, tracing and alarm email',
    () => {
      expect(() =>
        synth({ stage: 'prod', egress: 'fixed', tracing: 'active', alarmEmail: 'ops@example.com' }),
      ).not.toThrow();
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'fails synth on a finding nobody acknowledged',
    () => {
      // Bundling and schema validation skipped (the two tests above synthesize with both): the finding is the
      // secret's, whatever the functions' bundles hold.
      const { app } = buildGatewayApp({
        context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] },
        builtinCloudFormationValidation: false,
      });
      new Secret(new Stack(app, 'Unreviewed'), 'RotationlessSecret');
      expect(() => app.synth()).toThrow(/AwsSolutions-SMG4/);
    },
    SYNTH_TIMEOUT_MS,
  );
});
