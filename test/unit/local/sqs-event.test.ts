import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { buildSqsEvent } from '#local/events/index.js';

const QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:wecom-gateway-high';

const message = (overrides: Partial<Message> = {}): Message => ({
  MessageId: '059f36b4-87a3-44ab-83d2-661975830a7d',
  ReceiptHandle: 'AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a',
  MD5OfBody: 'e4e68fb7bd0e697a0ae8f1bb342846b3',
  Body: 'test',
  Attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: '1545082649183',
    SenderId: 'AIDAIENQZJOLO23YVJ4VO',
    ApproximateFirstReceiveTimestamp: '1545082649185',
  },
  ...overrides,
});

describe('buildSqsEvent', () => {
  it('builds one record per message with the documented fields', () => {
    const event = buildSqsEvent([message()], QUEUE_ARN, 'us-east-1');

    expect(event).toEqual({
      Records: [
        {
          messageId: '059f36b4-87a3-44ab-83d2-661975830a7d',
          receiptHandle: 'AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a',
          body: 'test',
          attributes: {
            ApproximateReceiveCount: '1',
            SentTimestamp: '1545082649183',
            SenderId: 'AIDAIENQZJOLO23YVJ4VO',
            ApproximateFirstReceiveTimestamp: '1545082649185',
          },
          messageAttributes: {},
          md5OfBody: 'e4e68fb7bd0e697a0ae8f1bb342846b3',
          eventSource: 'aws:sqs',
          eventSourceARN: QUEUE_ARN,
          awsRegion: 'us-east-1',
        },
      ],
    });
  });

  it('converts message attributes to the Lambda shape with base64 binary values', () => {
    const event = buildSqsEvent(
      [
        message({
          MD5OfMessageAttributes: 'abc',
          MessageAttributes: {
            lane: { DataType: 'String', StringValue: 'high' },
            attempt: { DataType: 'Number', StringValue: '2' },
            blob: { DataType: 'Binary', BinaryValue: new Uint8Array([1, 2, 3]) },
          },
        }),
      ],
      QUEUE_ARN,
      'us-east-1',
    );

    const [record] = event.Records;
    expect(record?.md5OfMessageAttributes).toBe('abc');
    expect(record?.messageAttributes).toEqual({
      lane: { stringValue: 'high', stringListValues: [], binaryListValues: [], dataType: 'String' },
      attempt: { stringValue: '2', stringListValues: [], binaryListValues: [], dataType: 'Number' },
      blob: { binaryValue: 'AQID', stringListValues: [], binaryListValues: [], dataType: 'Binary' },
    });
  });

  it('keeps optional system attributes such as AWSTraceHeader and drops unknown ones', () => {
    const base = message();
    const event = buildSqsEvent(
      [
        message({
          // Emulators may return attributes Lambda does not pass on.
          Attributes: {
            ...base.Attributes,
            AWSTraceHeader: 'Root=1-abc',
            Policy: 'x',
          } as Message['Attributes'],
        }),
      ],
      QUEUE_ARN,
      'us-east-1',
    );

    expect(event.Records[0]?.attributes.AWSTraceHeader).toBe('Root=1-abc');
    expect(event.Records[0]?.attributes).not.toHaveProperty('Policy');
  });

  it('refuses a message received without system attributes', () => {
    expect(() => buildSqsEvent([message({ Attributes: {} })], QUEUE_ARN, 'us-east-1')).toThrow(
      /ApproximateReceiveCount/,
    );
  });
});
