// Child process for the ingest baseline in its own process: a bare node:http server that parses the JSON body and
// does one SQS SendMessage per request — SPEC §7's baseline — so it can be compared with the bundled ingest
// handler running in a process of its own too. Reports its port over IPC.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { baselineServer } from '../lib/baseline.js';

const queueUrl = process.env.QUEUE_URL_NORMAL;
if (!queueUrl) throw new Error('QUEUE_URL_NORMAL not set');
const sqs = new SQSClient({ endpoint: process.env.AWS_ENDPOINT_URL_SQS });

const server = baselineServer(async (body) => {
  const id = randomUUID();
  const parsed = JSON.parse(body) as unknown;
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ id, parsed }) }));
  return id;
});
server.listen(0, '127.0.0.1', () => {
  process.send?.({ ready: true, port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));
