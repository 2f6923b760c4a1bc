// Child process for an SQS-fed function (the sender, notify, or the sender's fair baseline consumer): the bundled
// handler invoked over IPC with the SQS events that the parent's event source mapping emulation (local/poller.ts)
// gathers — as in Lambda, where the poller runs outside the function's process. BENCH_HANDLER names the bundle,
// BENCH_FUNCTION the function whose Lambda context (name, memory, timeout) the invocations get (default sender).
import { pathToFileURL } from 'node:url';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { FUNCTIONS, type FunctionId } from '#lib/resources/index.js';
import { buildLambdaContext } from '#local/events/index.js';

type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;
const bundle = process.env.BENCH_HANDLER;
if (!bundle) throw new Error('BENCH_HANDLER not set');
const fn = FUNCTIONS[(process.env.BENCH_FUNCTION ?? 'sender') as FunctionId] ?? FUNCTIONS.sender;
const { handler } = (await import(pathToFileURL(bundle).href)) as { handler: Handler };

process.on('message', (m: { id: number; event: SQSEvent }) => {
  const context = buildLambdaContext({
    functionName: fn.id,
    memoryMb: fn.memoryMb,
    timeoutSeconds: fn.timeoutSeconds,
  });
  handler(m.event, context).then(
    (result) => process.send?.({ id: m.id, result: result ?? { batchItemFailures: [] } }),
    (err: unknown) => process.send?.({ id: m.id, error: String(err) }),
  );
});
process.send?.({ ready: true });
process.on('disconnect', () => process.exit(0));
