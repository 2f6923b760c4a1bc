import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SENDER_CONCURRENCY } from '#lib/resources/index.js';
import { CONTEXT_DEFAULTS, readGatewayContext } from '../../infra/context.js';

const read = (context: Record<string, unknown>) => readGatewayContext(new App({ context }));

describe('Gateway context', () => {
  it('defaults to a dev stage with the shared sender concurrency and no fixed egress', () => {
    expect(read({})).toEqual({ ...CONTEXT_DEFAULTS, senderConcurrency: DEFAULT_SENDER_CONCURRENCY });
  });

  it('parses numbers given as -c strings', () => {
    expect(read({ senderConcurrency: '12', logRetentionDays: '90' })).toMatchObject({
      senderConcurrency: 12,
      logRetentionDays: 90,
    });
  });

  it('reads hookRoutes as a -c list or a cdk.json array, without duplicates', () => {
    expect(read({ hookRoutes: 'prom, github,prom' }).hookRoutes).toEqual(['prom', 'github']);
    expect(read({ hookRoutes: ['sentry'] }).hookRoutes).toEqual(['sentry']);
  });

  it.each([
    ['egress', 'static'],
    ['senderConcurrency', 'six'],
    ['logRetentionDays', '10'],
    ['stage', 'Prod_1'],
    ['alarmEmail', 'not-an-address'],
    ['wecomApiBase', 'http://qyapi.weixin.qq.com'],
    ['hookRateLimit', '0'],
    ['callbackBurstLimit', '-1'],
    ['hookRoutes', 'prom,bad name'],
  ])('names the bad key when %s is %j', (key, value) => {
    expect(() => read({ [key]: value })).toThrow(new RegExp(`context '${key}'`));
  });
});
