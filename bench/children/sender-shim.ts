// Child process for the peak-RSS figure of the sender: the bundled handler invoked over IPC with the SQS events
// that the parent's event source mapping emulation (local/poller.ts) gathers — as in Lambda, where the poller
// runs outside the function's process.
import { pathToFileURL } from 'node:url';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { buildLambdaContext } from '#local/events/index.js';

type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
const bundle = process.env.BENCH_HANDLER;
if (!bundle) throw new Error('BENCH_HANDLER not set');
const { handler } = (await import(pathToFileURL(bundle).href)) as { handler: Handler };

process.on('message', (m: { id: number; event: SQSEvent }) => {
  const context = buildLambdaContext({ functionName: 'sender', memoryMb: 512, timeoutSeconds: 30 });
  handler(m.event, context).then(
    (result) => process.send?.({ id: m.id, result }),
    (err: unknown) => process.send?.({ id: m.id, error: String(err) }),
  );
});
process.send?.({ ready: true });
process.on('disconnect', () => process.exit(0));
