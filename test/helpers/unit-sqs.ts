import { CreateQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll } from 'vitest';
import type { LaneName } from '#lib/resources/index.js';
import { type SqsEmulator, startSqs } from '#local/emulators.js';
import { localSqsClient } from './local-clients.js';

export interface UnitSqs {
  /** The SDK client on the file's fauxqs (set once `beforeAll` ran). */
  readonly client: SQSClient;
  /** A fresh pair of queues, `unit-<lane>-<suffix>-<n>`, so tests never see each other's messages. */
  lanes(suffix?: string): Promise<Record<LaneName, string>>;
}

/** fauxqs on a random loopback port for the calling test file: started before its tests, stopped after them. */
export function useUnitSqs(): UnitSqs {
  let sqs: SqsEmulator | undefined;
  let client: SQSClient | undefined;
  let run = 0;
  beforeAll(async () => {
    sqs = await startSqs();
    client = localSqsClient(sqs.endpoint);
  });
  afterAll(async () => {
    client?.destroy();
    await sqs?.stop();
  });
  const unit: UnitSqs = {
    get client() {
      if (!client) throw new Error('useUnitSqs: the client exists once beforeAll ran');
      return client;
    },
    async lanes(suffix) {
      run++;
      const name = (lane: LaneName) => ['unit', lane, suffix, String(run)].filter(Boolean).join('-');
      const url = async (lane: LaneName) =>
        (await unit.client.send(new CreateQueueCommand({ QueueName: name(lane) }))).QueueUrl as string;
      return { high: await url('high'), normal: await url('normal') };
    },
  };
  return unit;
}
