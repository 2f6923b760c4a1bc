import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { newMessageId } from '#lib/ingest/ids.js';
import { validateMessageRequest } from '#lib/messages/index.js';
import { encodeQueuedMessage, type MessageRecord, newRecord, toQueuedMessage } from '#lib/model/index.js';
import { createDocumentClient, DynamoMessageStore } from '#lib/store/index.js';
import type { TestGateway } from './gateway.js';

/** The local stack's message table, through the real store (for a test's own records and reads). */
export const messageStore = (gw: TestGateway): DynamoMessageStore =>
  new DynamoMessageStore(createDocumentClient('test'), gw.stack.env.tableName);

/**
 * A message as ingest accepts it (duplicate-check interval 3600 s), left by a crashed sender in the normal lane's
 * DLQ: its body in the DLQ, its record still `queued`. `lostAnswerAgoMs`: an attempt that long ago lost its answer
 * (it may have reached WeCom then).
 */
export async function deadInQueue(
  gw: TestGateway,
  store: DynamoMessageStore,
  message: { app: string; user: string; content: string; lostAnswerAgoMs?: number },
): Promise<MessageRecord> {
  const { app, user, content, lostAnswerAgoMs } = message;
  const validated = validateMessageRequest({ app, touser: user, msgtype: 'text', text: { content } });
  if (!validated.ok) throw new Error(JSON.stringify(validated.issues));
  const record = newRecord({
    id: newMessageId(),
    app,
    priority: 'normal',
    request: validated.value,
    apiKey: 'test',
    createdAt: new Date(Date.now() - (lostAnswerAgoMs ?? 0)).toISOString(),
    expiresAt: Math.floor(Date.now() / 1000) + 86_400,
    duplicateCheckSeconds: 3600,
  });
  if (lostAnswerAgoMs !== undefined) record.inDoubt = { since: record.createdAt };
  await store.create(record);
  await gw.stack.sqs.send(
    new SendMessageCommand({
      QueueUrl: gw.stack.resources.queueUrls['normal-dlq'],
      MessageBody: encodeQueuedMessage(toQueuedMessage(record)),
    }),
  );
  return record;
}
