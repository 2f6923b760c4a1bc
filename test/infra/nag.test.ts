import { Stack } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { buildGatewayApp } from '../../infra/build-app.js';
import { cdkJsonContext, SYNTH_TIMEOUT_MS } from './synth.js';

// Under vitest (NODE_ENV=test) CDK synthesizes "in memory" and throws on any failed validation report,
// so a clean synth means no unacknowledged cdk-nag finding. CloudFormation schema validation stays on,
// as in `cdk synth`.
const build = (context: Record<string, unknown> = {}) =>
  buildGatewayApp({ context: { ...cdkJsonContext(), ...context } });

describe('cdk-nag AwsSolutions', () => {
  it(
    'reports no unacknowledged finding for the default stack',
    () => {
      const { app } = build();
      expect(() => app.synth()).not.toThrow();
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'reports no unacknowledged finding for prod with fixed egress, tracing and alarm email',
    () => {
      const { app } = build({
        stage: 'prod',
        egress: 'fixed',
        tracing: 'active',
        alarmEmail: 'ops@example.com',
      });
      expect(() => app.synth()).not.toThrow();
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'fails synth on a finding nobody acknowledged',
    () => {
      const { app } = build();
      new Secret(new Stack(app, 'Unreviewed'), 'RotationlessSecret');
      expect(() => app.synth()).toThrow(/AwsSolutions-SMG4/);
    },
    SYNTH_TIMEOUT_MS,
  );
});
