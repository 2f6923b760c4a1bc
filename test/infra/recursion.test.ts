import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { GatewayFunction } from '../../infra/constructs/gateway-function.js';
import { logicalId, SYNTH_TIMEOUT_MS, type SynthesizedGateway, synthGateway } from './synth.js';

describe('Recursive loop detection', () => {
  const variants: Record<string, SynthesizedGateway> = {};
  beforeAll(() => {
    variants.default = synthGateway();
    variants['prod + fixed egress'] = synthGateway({ stage: 'prod', egress: 'fixed' });
  }, SYNTH_TIMEOUT_MS);

  const fnProps = (gateway: SynthesizedGateway, name: 'ingest' | 'sender') =>
    gateway.template.findResources('AWS::Lambda::Function')[logicalId(gateway, gateway.stack[name].fn)]
      ?.Properties;

  it.each(['default', 'prod + fixed egress'])(
    'lets the sender feed the lanes it consumes (%s)',
    (variant) => {
      expect(fnProps(variants[variant] as SynthesizedGateway, 'sender')?.RecursiveLoop).toBe('Allow');
    },
  );

  it.each(['default', 'prod + fixed egress'])(
    'leaves ingest, which no queue triggers, at the default (%s)',
    (variant) => {
      expect(fnProps(variants[variant] as SynthesizedGateway, 'ingest')).not.toHaveProperty('RecursiveLoop');
    },
  );

  it(
    'refuses to synthesize a function that sends to its own trigger queue without saying so',
    () => {
      const app = new App();
      const stack = new Stack(app, 'Loop');
      const queue = new Queue(stack, 'Queue', { visibilityTimeout: Duration.minutes(3) });
      new GatewayFunction(stack, 'Notify', {
        id: 'sender',
        stage: 'dev',
        logRetention: RetentionDays.ONE_DAY,
        removalPolicy: RemovalPolicy.DESTROY,
        wecom: { apiBase: 'https://qyapi.weixin.qq.com' },
      })
        .useLanes({ high: queue, normal: queue }, ['SendMessage'])
        .consume(queue, { batchSize: 1 });
      expect(() => app.synth()).toThrow(/sends to a queue that triggers it: set feedsOwnTrigger/);
    },
    SYNTH_TIMEOUT_MS,
  );
});
