import { describe, expect, it } from 'vitest';
import { buildLambdaContext } from '#local/events/index.js';

describe('buildLambdaContext', () => {
  it('fills the documented Node.js context fields', () => {
    const context = buildLambdaContext({ functionName: 'sender', memoryMb: 512, timeoutSeconds: 30 });

    expect(context).toMatchObject({
      callbackWaitsForEmptyEventLoop: true,
      functionName: 'sender',
      functionVersion: '$LATEST',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:sender',
      memoryLimitInMB: '512',
      logGroupName: '/aws/lambda/sender',
    });
    expect(context.awsRequestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(context.logStreamName).toMatch(/^\d{4}\/\d{2}\/\d{2}\/\[\$LATEST\][0-9a-f]{32}$/);
  });

  it('gives each function one log stream across invocations, as one execution environment has', () => {
    const of = (functionName: string) =>
      buildLambdaContext({ functionName, memoryMb: 512, timeoutSeconds: 30 }).logStreamName;
    expect(of('ingest')).toBe(of('ingest'));
    expect(of('ingest')).not.toBe(of('callback'));
    const first = buildLambdaContext({ functionName: 'ingest', memoryMb: 512, timeoutSeconds: 30 });
    const second = buildLambdaContext({ functionName: 'ingest', memoryMb: 512, timeoutSeconds: 30 });
    expect(second.awsRequestId).not.toBe(first.awsRequestId);
  });

  it('counts getRemainingTimeInMillis down from the timeout and stops at zero', () => {
    let now = 1_000_000;
    const context = buildLambdaContext({
      functionName: 'f',
      memoryMb: 128,
      timeoutSeconds: 3,
      now: () => now,
    });

    expect(context.getRemainingTimeInMillis()).toBe(3_000);
    now += 1_250;
    expect(context.getRemainingTimeInMillis()).toBe(1_750);
    now += 5_000;
    expect(context.getRemainingTimeInMillis()).toBe(0);
  });

  it('gives every invocation its own request id', () => {
    const opts = { functionName: 'f', memoryMb: 128, timeoutSeconds: 3 };

    expect(buildLambdaContext(opts).awsRequestId).not.toBe(buildLambdaContext(opts).awsRequestId);
  });
});
