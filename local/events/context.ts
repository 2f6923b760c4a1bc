/**
 * The Node.js Lambda context object, fields as in
 * https://docs.aws.amazon.com/lambda/latest/dg/nodejs-context.html
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { LOCAL_ACCOUNT_ID } from './apigw-v2.js';

export interface LambdaContextOptions {
  readonly functionName: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly region?: string;
  /** Clock for the deadline; defaults to `Date.now`. */
  readonly now?: () => number;
}

/**
 * A function's log stream, as Lambda names one per execution environment (its start date and a random id): the
 * local stack runs each function as one environment, so every invocation of it writes to the same stream.
 */
const logStreams = new Map<string, string>();
const logStreamOf = (functionName: string, started: Date): string => {
  let stream = logStreams.get(functionName);
  if (stream === undefined) {
    const day = started.toISOString().slice(0, 10).replaceAll('-', '/');
    stream = `${day}/[$LATEST]${randomBytes(16).toString('hex')}`;
    logStreams.set(functionName, stream);
  }
  return stream;
};

/** Builds a context whose `getRemainingTimeInMillis()` counts down from the function timeout. */
export function buildLambdaContext(opts: LambdaContextOptions): Context {
  const now = opts.now ?? Date.now;
  const region = opts.region ?? 'us-east-1';
  const deadline = now() + opts.timeoutSeconds * 1000;
  const unsupported = (name: string) => () => {
    throw new Error(
      `context.${name}() is not supported locally: return a value or throw from an async handler`,
    );
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: opts.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:${LOCAL_ACCOUNT_ID}:function:${opts.functionName}`,
    memoryLimitInMB: String(opts.memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${opts.functionName}`,
    logStreamName: logStreamOf(opts.functionName, new Date(now())),
    getRemainingTimeInMillis: () => Math.max(0, deadline - now()),
    done: unsupported('done'),
    fail: unsupported('fail'),
    succeed: unsupported('succeed'),
  };
}
