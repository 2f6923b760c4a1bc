/**
 * The event Lambda's SQS event source mapping passes to the function, built from messages returned
 * by ReceiveMessage. Fields as in https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html
 * (section "Example standard queue message event").
 */
import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSMessageAttribute, SQSRecord, SQSRecordAttributes } from 'aws-lambda';

/** System attributes Lambda copies into `attributes`; the first four are always present. */
const REQUIRED_ATTRIBUTES = [
  'ApproximateReceiveCount',
  'SentTimestamp',
  'SenderId',
  'ApproximateFirstReceiveTimestamp',
] as const;
const OPTIONAL_ATTRIBUTES = [
  'AWSTraceHeader',
  'SequenceNumber',
  'MessageGroupId',
  'MessageDeduplicationId',
  'DeadLetterQueueSourceArn',
] as const;

/**
 * Builds an SQS event. The messages must have been received with `MessageSystemAttributeNames:
 * ['All']` and `MessageAttributeNames: ['All']`, as the event source mapping does.
 *
 * @throws TypeError when a message lacks an id, receipt handle or required system attribute.
 */
export function buildSqsEvent(messages: readonly Message[], queueArn: string, region: string): SQSEvent {
  return { Records: messages.map((m) => toRecord(m, queueArn, region)) };
}

function toRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const { MessageId, ReceiptHandle } = message;
  if (!MessageId || !ReceiptHandle) throw new TypeError('SQS message without MessageId or ReceiptHandle');
  const system: Record<string, string | undefined> = message.Attributes ?? {};
  const attributes: Record<string, string> = {};
  for (const name of REQUIRED_ATTRIBUTES) {
    const value = system[name];
    if (value === undefined) {
      throw new TypeError(`SQS message ${MessageId} lacks system attribute ${name}; receive with 'All'`);
    }
    attributes[name] = value;
  }
  for (const name of OPTIONAL_ATTRIBUTES) {
    const value = system[name];
    if (value !== undefined) attributes[name] = value;
  }

  const record: SQSRecord = {
    messageId: MessageId,
    receiptHandle: ReceiptHandle,
    body: message.Body ?? '',
    attributes: attributes as unknown as SQSRecordAttributes,
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
        name,
        toLambdaAttribute(value),
      ]),
    ),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
  if (message.MD5OfMessageAttributes) record.md5OfMessageAttributes = message.MD5OfMessageAttributes;
  return record;
}

/**
 * Lambda uses camelCase keys, base64 for binary values, and always includes the (reserved, unused)
 * list fields as empty arrays.
 */
function toLambdaAttribute(value: MessageAttributeValue): SQSMessageAttribute {
  const attribute: SQSMessageAttribute = {
    stringListValues: [],
    binaryListValues: [],
    dataType: value.DataType ?? 'String',
  };
  if (value.StringValue !== undefined) attribute.stringValue = value.StringValue;
  if (value.BinaryValue !== undefined)
    attribute.binaryValue = Buffer.from(value.BinaryValue).toString('base64');
  return attribute;
}
