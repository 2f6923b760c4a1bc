import {
  ConditionalCheckFailedException,
  DynamoDBServiceException,
  InternalServerError,
  ProvisionedThroughputExceededException,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { isAwsUnavailable, isConditionFailed } from '#lib/aws/index.js';

const metadata = (httpStatusCode?: number) => ({ $metadata: { httpStatusCode, attempts: 4 } });

describe('isAwsUnavailable', () => {
  it('is true for a failure on the service side and for throttling', () => {
    expect(isAwsUnavailable(new InternalServerError({ message: 'boom', ...metadata(500) }))).toBe(true);
    const throttled = new ProvisionedThroughputExceededException({ message: 'slow down', ...metadata(400) });
    expect(isAwsUnavailable(throttled)).toBe(true);
  });

  it('is false for errors the request itself caused, and for anything that is not an SDK error', () => {
    const validation = new DynamoDBServiceException({
      name: 'ValidationException',
      $fault: 'client',
      message: 'bad expression',
      ...metadata(400),
    });
    expect(isAwsUnavailable(validation)).toBe(false);
    expect(isAwsUnavailable(new ConditionalCheckFailedException({ message: 'no', ...metadata(400) }))).toBe(
      false,
    );
    expect(isAwsUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(
      false,
    );
    expect(isAwsUnavailable('down')).toBe(false);
  });
});

describe('isConditionFailed', () => {
  it('recognises the SDK exception by name, and nothing else', () => {
    expect(isConditionFailed(new ConditionalCheckFailedException({ message: 'no', ...metadata(400) }))).toBe(
      true,
    );
    expect(isConditionFailed(new InternalServerError({ message: 'boom', ...metadata(500) }))).toBe(false);
    expect(isConditionFailed(undefined)).toBe(false);
  });
});
