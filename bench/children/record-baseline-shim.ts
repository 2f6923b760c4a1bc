// Child process for SPEC §7's fair ingest baseline of a record-then-enqueue design: a bare node:http server that per
// request parses the JSON body, writes one record (a conditional DynamoDB PutItem, as ingest's record write is) and
// does one SQS SendMessage — in a process of its own, like the bundled ingest handler it is compared with.
// BENCH_BASELINE_MODE: `sequential` (PutItem, then SendMessage: what ingest does) or `overlapped` (both at once: the
// latency a design that overlaps the two would gain), or `put-only`: the conditional PutItem of the body as it came,
// nothing parsed or sent — the least any receiver that stores what it is sent must do (the callback's baseline).
// Reports its port over IPC.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { baselineServer } from '../lib/baseline.js';

const queueUrl = process.env.QUEUE_URL_NORMAL;
const tableName = process.env.TABLE_NAME;
if (!queueUrl || !tableName) throw new Error('QUEUE_URL_NORMAL and TABLE_NAME must be set');
const mode = process.env.BENCH_BASELINE_MODE ?? 'sequential';
const sqs = new SQSClient({ endpoint: process.env.AWS_ENDPOINT_URL_SQS });
const db = new DynamoDBClient({ endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB });

const server = baselineServer(async (body) => {
  const id = randomUUID();
  const put = () =>
    db.send(
      new PutItemCommand({
        TableName: tableName,
        Item: { pk: { S: `BENCH#${id}` }, sk: { S: 'MSG' }, body: { S: body } },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  if (mode === 'put-only') {
    await put();
    return id;
  }
  const parsed = JSON.parse(body) as unknown;
  const send = () =>
    sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ id, parsed }) }));
  if (mode === 'overlapped') await Promise.all([put(), send()]);
  else {
    await put();
    await send();
  }
  return id;
});
server.listen(0, '127.0.0.1', () => {
  process.send?.({ ready: true, port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));
