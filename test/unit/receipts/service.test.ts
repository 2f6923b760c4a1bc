import { describe, expect, it } from 'vitest';
import { CallbackSignatureError } from '#lib/callback/index.js';
import { parseConfig } from '#lib/config/index.js';
import type { NotifyJob } from '#lib/model/index.js';
import { createLogger, Metrics } from '#lib/observability/index.js';
import {
  CallbackAppNotFoundError,
  type CallbackDeps,
  createVerifiers,
  receiveCallback,
  verifyCallbackUrl,
} from '#lib/receipts/index.js';
import type { CardCodeStore, EventStore, RecordOutcome, StoredEvent } from '#lib/store/index.js';
import { minimalConfig } from '#test/helpers/unit-config.js';
import { sealCallback, sealEchostr, wecomXml } from '#test/helpers/wecom-callback.js';

const NOW = Date.parse('2026-12-01T08:00:00Z');
const TS = NOW / 1000;

/** In-memory doubles of the stores and the queue; `notified` plays the claim's mark. */
function harness(opts: { taskOwner?: string } = {}) {
  const input = minimalConfig();
  const config = parseConfig(input);
  const creds = { ...input.apps.ops.callback, corpId: input.apps.ops.corpId };
  const stored = new Map<string, StoredEvent & { notified?: boolean }>();
  const saved: [string, string, string][] = [];
  const queued: NotifyJob[] = [];
  const events: EventStore = {
    record: async (e): Promise<RecordOutcome> => {
      const first = stored.get(e.id);
      if (first) return { outcome: 'duplicate', first, notified: first.notified === true };
      stored.set(e.id, e);
      return { outcome: 'stored' };
    },
    markNotified: async (_app, id) => {
      const e = stored.get(id);
      if (e) e.notified = true;
    },
    findMessageByTask: async (_app, taskId) => (taskId === 'task-1' ? opts.taskOwner : undefined),
    listByApp: async () => ({ events: [] }),
    listByMessage: async () => [],
  };
  const cards: CardCodeStore = {
    save: async (id, code, at) => void saved.push([id, code, at]),
    take: async () => true,
    restore: async () => undefined,
  };
  const metrics = new Metrics('test', () => undefined);
  const lines: string[] = [];
  const deps: CallbackDeps = {
    config,
    verifiers: createVerifiers(config, { now: () => NOW }),
    events,
    cards,
    notify: {
      enqueue: async (job) => void queued.push(job),
      retryAfter: async () => undefined,
      deadLetter: async () => undefined,
    },
    logger: createLogger({ service: 'test' }, { write: (line) => void lines.push(line) }),
    metrics,
    now: () => NOW,
  };
  return { deps, creds, stored, saved, queued, metrics, lines };
}

/** A text message from bob, sealed as WeCom sends it. */
const textFromBob = (creds: Parameters<typeof sealCallback>[0], msgId: string) =>
  sealCallback(
    creds,
    wecomXml({ FromUserName: 'bob', CreateTime: TS, MsgType: 'text', Content: 'hi', MsgId: msgId }),
    { timestamp: TS },
  );

const click = wecomXml({
  ToUserName: 'ww0123456789abcdef',
  FromUserName: 'alice',
  CreateTime: TS,
  MsgType: 'event',
  Event: 'template_card_event',
  EventKey: 'approve',
  TaskId: 'task-1',
  CardType: 'button_interaction',
  ResponseCode: 'click-rc',
  AgentID: 1000002,
});

describe('receiveCallback', () => {
  it('ties a card event to its message, keeps its response_code for the card, and queues one wecom.event', async () => {
    const h = harness({ taskOwner: 'msg_1' });
    const sealed = sealCallback(h.creds, click, { timestamp: TS });

    const first = await receiveCallback(h.deps, 'ops', sealed.query, sealed.body);
    const retry = await receiveCallback(h.deps, 'ops', sealed.query, sealed.body);

    expect(first).toMatchObject({ duplicate: false, messageId: 'msg_1' });
    expect(retry).toMatchObject({ duplicate: true, messageId: 'msg_1', eventId: first.eventId });
    expect(h.queued).toEqual([
      expect.objectContaining({ kind: 'event', messageId: 'msg_1', eventId: first.eventId }),
    ]);
    expect(JSON.stringify([...h.stored.values(), ...h.queued])).not.toContain('click-rc');
    expect(h.saved[0]).toEqual(['msg_1', 'click-rc', new Date(NOW).toISOString()]);
    expect(h.metrics.snapshot()).toMatchObject({ CallbacksStored: 1, CallbacksDuplicate: 1 });
  });

  it('queues the webhook on a retry when the first attempt stored the event but never queued it', async () => {
    const h = harness({ taskOwner: 'msg_1' });
    const sealed = sealCallback(h.creds, click, { timestamp: TS });
    h.deps.notify.enqueue = async () => {
      throw new Error('sqs down');
    };
    await expect(receiveCallback(h.deps, 'ops', sealed.query, sealed.body)).rejects.toThrow('sqs down');

    h.deps.notify.enqueue = async (job) => void h.queued.push(job);
    await receiveCallback(h.deps, 'ops', sealed.query, sealed.body);

    expect(h.queued).toHaveLength(1);
  });

  it('stores a user message untied to any message and queues nothing', async () => {
    const h = harness();
    const sealed = textFromBob(h.creds, '42');

    expect(await receiveCallback(h.deps, 'ops', sealed.query, sealed.body)).toEqual({
      eventId: 'msg:42',
      duplicate: false,
    });
    expect(h.queued).toEqual([]);
  });

  it('logs a stored callback at debug only: the stored event is its record', async () => {
    const h = harness();
    const first = textFromBob(h.creds, '43');
    await receiveCallback(h.deps, 'ops', first.query, first.body);
    expect(h.lines).toEqual([]);

    const debug = {
      ...h.deps,
      logger: createLogger({ service: 'test' }, { level: 'debug', write: (l) => void h.lines.push(l) }),
    };
    const again = textFromBob(h.creds, '44');
    await receiveCallback(debug, 'ops', again.query, again.body);
    expect(h.lines.map((l) => JSON.parse(l))).toMatchObject([
      { level: 'debug', message: 'callback stored', app: 'ops', eventId: 'msg:44', duplicate: false },
    ]);
  });

  it('stores nothing for a forged callback (counted as rejected), and 404s an app without callback settings', async () => {
    const h = harness();
    const sealed = sealCallback({ ...h.creds, token: 'forged' }, click, { timestamp: TS });

    await expect(receiveCallback(h.deps, 'ops', sealed.query, sealed.body)).rejects.toBeInstanceOf(
      CallbackSignatureError,
    );
    for (const app of ['billing', 'constructor', '__proto__', 'hasOwnProperty']) {
      await expect(receiveCallback(h.deps, app, sealed.query, sealed.body)).rejects.toBeInstanceOf(
        CallbackAppNotFoundError,
      );
    }
    expect(h.stored.size).toBe(0);
    expect(h.metrics.snapshot()).toMatchObject({ CallbacksRejected: 1 });
  });

  it('answers URL verification with the plaintext', () => {
    const h = harness();
    expect(verifyCallbackUrl(h.deps, 'ops', sealEchostr(h.creds, 'echo-123', TS))).toBe('echo-123');
  });
});
