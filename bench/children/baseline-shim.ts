// Child process for the ingest baseline in its own process: a bare node:http server that parses the JSON body and
// does one SQS SendMessage per request — SPEC §7's baseline — so it can be compared with the bundled ingest
// handler running in a process of its own too. Reports its port over IPC.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';

const queueUrl = process.env.QUEUE_URL_NORMAL;
if (!queueUrl) throw new Error('QUEUE_URL_NORMAL not set');
const sqs = new SQSClient({ endpoint: process.env.AWS_ENDPOINT_URL_SQS });

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const id = randomUUID();
    Promise.resolve()
      .then(() => JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown)
      .then((parsed) =>
        sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ id, parsed }) })),
      )
      .then(
        () => {
          const out = JSON.stringify({ id, status: 'queued' });
          res.writeHead(202, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(out),
          });
          res.end(out);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
  });
});
server.listen(0, '127.0.0.1', () => {
  process.send?.({ ready: true, port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));
