import { describe, expect, it } from 'vitest';
import { parseConfig } from '#lib/config/index.js';
import { applyChange, changes, type MessageRecord, type NotifyJob } from '#lib/model/index.js';
import { notifyOnStatus } from '#lib/notify/index.js';
import { createLogger, Metrics } from '#lib/observability/index.js';
import { QueueUnavailableError } from '#lib/queue/index.js';
import { messageRecord } from '#test/helpers/message-records.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

const AT = '2026-12-01T08:00:00.000Z';

function listener(opts: { webhook?: Record<string, unknown>; failEnqueue?: boolean } = {}) {
  const input = minimalConfig();
  if (opts.webhook) (input.apps.ops as Record<string, unknown>).webhook = opts.webhook;
  const queued: NotifyJob[] = [];
  const logs: string[] = [];
  const metrics = new Metrics('test', () => undefined);
  const onStatus = notifyOnStatus({
    config: parseConfig(input),
    queue: {
      enqueue: async (job) => {
        if (opts.failEnqueue) throw new QueueUnavailableError({ cause: new Error('down') });
        queued.push(job);
      },
      retryAfter: async () => undefined,
      deadLetter: async () => undefined,
    },
    logger: createLogger({ service: 'test' }, { write: (l) => logs.push(l) }),
    metrics,
  });
  return { onStatus, queued, logs, metrics };
}

const sent = (overrides: Partial<MessageRecord> = {}) =>
  applyChange(messageRecord(overrides), changes.send(AT, { msgid: 'M' })) as MessageRecord;

describe('notifyOnStatus', () => {
  it('queues message.<status> for a record with a callback_url', async () => {
    const l = listener();
    const record = sent({ callbackUrl: 'https://hooks.example.com/' });

    await l.onStatus(record, 'send');

    expect(l.queued).toEqual([
      { v: 1, kind: 'status', messageId: record.id, app: 'ops', status: 'sent', at: AT },
    ]);
  });

  it('queues nothing without a target, for an event type the app filtered out, or for a withdrawn record', async () => {
    const none = listener();
    const filtered = listener({ webhook: { url: 'https://d.example.com/', events: ['message.failed'] } });
    const withdrawn = applyChange(
      messageRecord({ callbackUrl: 'https://hooks.example.com/' }),
      changes.withdraw(AT, 'enqueue_failed'),
    ) as MessageRecord;

    await none.onStatus(sent(), 'send');
    await filtered.onStatus(sent(), 'send');
    await none.onStatus(withdrawn, 'withdraw');

    expect([...none.queued, ...filtered.queued]).toEqual([]);
  });

  it("uses the app's default webhook URL when the message names none", async () => {
    const l = listener({ webhook: { url: 'https://d.example.com/' } });

    await l.onStatus(sent(), 'send');

    expect(l.queued).toHaveLength(1);
  });

  it('logs and counts a failed enqueue instead of failing the status write', async () => {
    const l = listener({ failEnqueue: true });

    await expect(
      l.onStatus(sent({ callbackUrl: 'https://hooks.example.com/' }), 'send'),
    ).resolves.toBeUndefined();

    expect(l.metrics.snapshot()).toMatchObject({ WebhookEnqueueFailed: 1 });
    expect(l.logs.join('\n')).toContain('could not queue the status webhook');
  });
});
