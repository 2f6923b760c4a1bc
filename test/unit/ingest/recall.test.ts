import { describe, expect, it } from 'vitest';
import { recallMessage, StateConflictError, submitMessage } from '#lib/ingest/index.js';
import { STATUS } from '#lib/model/index.js';
import { WecomApiError } from '#lib/wecom/index.js';
import { fakeIngest, ingestError, opsApiKey } from '#test/helpers/ingest-fakes.js';
import { messageBody } from '#test/helpers/messages-factories.js';

const apiKey = opsApiKey();

describe('recallMessage', () => {
  const sentMessage = async (f: ReturnType<typeof fakeIngest>, sentAt: string) => {
    const { id } = await submitMessage(f.deps, apiKey, messageBody('text'));
    const record = f.messages.records.get(id);
    if (!record) throw new Error('no record');
    Object.assign(record, { status: STATUS.sent, sentAt, wecom: { msgid: 'wecom-msgid-1' } });
    return id;
  };

  it('calls WeCom with the stored msgid and records recalled', async () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    const f = fakeIngest({ now: () => now });
    const id = await sentMessage(f, '2026-01-01T11:00:00Z');

    expect(await recallMessage(f.deps, apiKey, id)).toEqual({ status: 'recalled' });

    expect(f.recalls).toEqual(['t0:wecom-msgid-1']);
    expect(f.messages.records.get(id)?.status).toBe('recalled');
  });

  it('answers 409 recall_window_passed after 24 hours without calling WeCom', async () => {
    const f = fakeIngest({ now: () => Date.parse('2026-01-02T11:00:01Z') });
    const id = await sentMessage(f, '2026-01-01T11:00:00Z');

    const err = await ingestError(recallMessage(f.deps, apiKey, id));

    expect(err).toBeInstanceOf(StateConflictError);
    expect(err.code).toBe('recall_window_passed');
    expect(f.recalls).toEqual([]);
  });

  it('refreshes the token once when WeCom says it expired, then retries', async () => {
    let calls = 0;
    const f = fakeIngest({
      wecomRecall: async () => {
        if (calls++ === 0) throw new WecomApiError(42001, 'access_token expired', 'message/recall');
      },
    });
    const id = await sentMessage(f, new Date().toISOString());

    await recallMessage(f.deps, apiKey, id);

    expect(f.tokenFetches()).toBe(2);
    expect(f.recalls).toEqual(['t0:wecom-msgid-1', 't1:wecom-msgid-1']);
  });

  it('answers 409 wecom_recall_failed for a permanent WeCom error and keeps the status', async () => {
    const f = fakeIngest({
      wecomRecall: async () => {
        throw new WecomApiError(40003, 'invalid userid', 'message/recall');
      },
    });
    const id = await sentMessage(f, new Date().toISOString());
    const err = await ingestError(recallMessage(f.deps, apiKey, id));
    expect(err.code).toBe('wecom_recall_failed');
    expect(f.messages.records.get(id)?.status).toBe('sent');
  });

  it('answers 409 not_recallable for a queued message', async () => {
    const f = fakeIngest();
    const { id } = await submitMessage(f.deps, apiKey, messageBody('text'));
    expect((await ingestError(recallMessage(f.deps, apiKey, id))).code).toBe('not_recallable');
  });
});
