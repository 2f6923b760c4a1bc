import type { MessageRequest } from '#lib/messages/index.js';
import { encodeQueuedMessage, type MessageRecord, type QueuedMessage } from '#lib/model/index.js';
import { QUEUE_MAX_MESSAGE_BYTES } from '#lib/resources/index.js';
import { MessageTooLargeError } from './errors.js';

/**
 * What a message may weigh once stored and queued. Its queue body must fit the queue's maximum message size, less
 * room for the fields the sender adds to its copies (deferrals, retries). Its record must fit a DynamoDB item
 * (400 KB, https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html), less room for
 * what the sender adds: its bounded events and WeCom's receipt (up to 1,000 invalid userids). JSON bytes
 * overestimate DynamoDB's item size (names and values count, quotes and braces do not), so the check errs safe.
 */
export const MAX_QUEUE_BODY_BYTES = QUEUE_MAX_MESSAGE_BYTES - 1_024;
export const MAX_RECORD_BYTES = 409_600 - 80 * 1_024;

/** Throws MessageTooLargeError (413) naming the largest field when the message cannot be stored or queued. */
export function assertStorable(record: MessageRecord, body: QueuedMessage): void {
  const bodyBytes = Buffer.byteLength(encodeQueuedMessage(body));
  const recordBytes = Buffer.byteLength(JSON.stringify(record));
  if (bodyBytes <= MAX_QUEUE_BODY_BYTES && recordBytes <= MAX_RECORD_BYTES) return;
  const limit = bodyBytes > MAX_QUEUE_BODY_BYTES ? MAX_QUEUE_BODY_BYTES : MAX_RECORD_BYTES;
  const size = Math.max(bodyBytes, recordBytes);
  const largest = largestField(record.request);
  throw new MessageTooLargeError(
    `the message is ${size} bytes stored; the gateway stores and queues at most ${limit} bytes per message`,
    [
      {
        field: largest.field,
        message: `${largest.bytes} bytes; make it smaller (the whole message must stay under ${limit} bytes)`,
      },
    ],
  );
}

/** The request's largest string (or recipient list), by UTF-8 bytes, with its path as a client wrote it. */
export function largestField(req: MessageRequest): { field: string; bytes: number } {
  let best: { field: string; bytes: number } = { field: req.msgtype, bytes: 0 };
  const visit = (value: unknown, path: string) => {
    if (typeof value === 'string') {
      const bytes = Buffer.byteLength(value);
      if (bytes > best.bytes) best = { field: path, bytes };
    } else if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) visit(v, `${path}[${i}]`);
    } else if (value && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) visit(v, `${path}.${k}`);
  };
  visit(req.content, req.msgtype);
  for (const list of ['touser', 'toparty', 'totag'] as const) {
    if (req.robot !== undefined) break;
    const bytes = Buffer.byteLength(req.recipients[list].join('|'));
    if (bytes > best.bytes) best = { field: list, bytes };
  }
  const metadata = Buffer.byteLength(JSON.stringify(req.metadata ?? {}));
  if (metadata > best.bytes) best = { field: 'metadata', bytes: metadata };
  return best;
}
