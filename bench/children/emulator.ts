// Child process running one emulator of the local stack — DynamoDB (dynalite), SQS (fauxqs) or the WeCom simulator —
// so the bench can measure the gateway's functions without sharing an event loop with them. Started with tsx
// (`node --import tsx`), reports its endpoint over IPC and exits when the parent disconnects.
import { startDynamo, startSqs } from '#local/emulators.js';
import { type SimulatorOptions, startWecomSimulator } from '#local/wecom-sim/index.js';

const kind = process.argv[2];
let endpoint: string;
if (kind === 'dynamodb') endpoint = (await startDynamo()).endpoint;
else if (kind === 'sqs') endpoint = (await startSqs()).endpoint;
else if (kind === 'sim') {
  const options = JSON.parse(process.env.BENCH_SIM_OPTIONS ?? '{}') as SimulatorOptions;
  endpoint = (await startWecomSimulator(options)).url;
} else throw new Error(`usage: emulator.ts dynamodb|sqs|sim, got ${kind}`);
process.send?.({ ready: true, endpoint });
process.on('disconnect', () => process.exit(0));
