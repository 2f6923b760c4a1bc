import { describe, expect, it } from 'vitest';
import { submitMessage, updateCard } from '#lib/ingest/index.js';
import { STATUS } from '#lib/model/index.js';
import { WecomApiError, WecomTransportError } from '#lib/wecom/index.js';
import { fakeIngest, ingestError, opsApiKey } from '#test/helpers/ingest-fakes.js';
import { cardBody, messageBody } from '#test/helpers/messages-factories.js';

const apiKey = opsApiKey();
const NOW = Date.parse('2026-01-05T12:00:00Z');
const HOUR = 3_600_000;
const at = (ms: number) => new Date(ms).toISOString();
const APPROVED = { button: { replace_name: 'Approved by alice' } };

/** A sent button card with the send's response_code, and optionally a click's. */
async function sentCard(
  f: ReturnType<typeof fakeIngest>,
  opts: { sentAt?: number; click?: { code: string; at: number } } = {},
) {
  const { id } = await submitMessage(f.deps, apiKey, cardBody('button_interaction', { task_id: undefined }));
  const record = f.messages.records.get(id);
  if (!record) throw new Error('no record');
  Object.assign(record, {
    status: STATUS.sent,
    sentAt: at(opts.sentAt ?? NOW - HOUR),
    wecom: { msgid: 'm1', response_code: 'send-rc' },
    ...(opts.click ? { cardCode: { code: opts.click.code, at: at(opts.click.at) } } : {}),
  });
  return id;
}

describe('updateCard', () => {
  it("spends the click's code first, then the send's, then answers 409 no_response_code", async () => {
    const f = fakeIngest({ now: () => NOW });
    const id = await sentCard(f, { click: { code: 'click-rc', at: NOW - 60_000 } });

    await updateCard(f.deps, apiKey, id, APPROVED);
    await updateCard(f.deps, apiKey, id, APPROVED);
    const err = await ingestError(updateCard(f.deps, apiKey, id, APPROVED));

    expect(f.cardUpdates.map((b) => b.response_code)).toEqual(['click-rc', 'send-rc']);
    expect(f.cardUpdates[0]).toMatchObject({ atall: 1, agentid: 1000002, button: APPROVED.button });
    expect(err.code).toBe('no_response_code');
  });

  it('moves on to the next code when WeCom says one is spent or expired (60140)', async () => {
    const f = fakeIngest({
      now: () => NOW,
      wecomUpdateCard: async (_t, body) => {
        if (body.response_code === 'click-rc') throw new WecomApiError(60140, 'invalid response_code', 'x');
      },
    });
    const id = await sentCard(f, { click: { code: 'click-rc', at: NOW - 60_000 } });

    expect(await updateCard(f.deps, apiKey, id, APPROVED)).toEqual({ id, status: 'updated' });
    expect(f.cardUpdates.map((b) => b.response_code)).toEqual(['click-rc', 'send-rc']);
    expect(f.messages.records.get(id)?.cardCode).toBeUndefined();
  });

  it('puts a code back when WeCom did not take it: a transport failure (503) or a refusal (409)', async () => {
    let fail: Error | undefined = new WecomTransportError('down', 'ECONNREFUSED', { inDoubt: false });
    const f = fakeIngest({
      now: () => NOW,
      wecomUpdateCard: async () => {
        if (fail) throw fail;
      },
    });
    const id = await sentCard(f);

    expect((await ingestError(updateCard(f.deps, apiKey, id, APPROVED))).code).toBe('unavailable');
    fail = new WecomApiError(82102, 'not in message', 'x');
    expect((await ingestError(updateCard(f.deps, apiKey, id, APPROVED))).code).toBe(
      'wecom_card_update_failed',
    );
    fail = undefined;
    await updateCard(f.deps, apiKey, id, APPROVED);

    expect(f.cardUpdates.map((b) => b.response_code)).toEqual(['send-rc', 'send-rc', 'send-rc']);
  });

  it('does not offer codes older than 72 h to WeCom', async () => {
    const f = fakeIngest({ now: () => NOW });
    const id = await sentCard(f, {
      sentAt: NOW - 73 * HOUR,
      click: { code: 'old-click', at: NOW - 72 * HOUR - 1 },
    });

    expect((await ingestError(updateCard(f.deps, apiKey, id, APPROVED))).code).toBe('no_response_code');
    expect(f.cardUpdates).toEqual([]);
  });

  it('refuses a message that is not a sent card (409) and an invalid body (400) before touching a code', async () => {
    const f = fakeIngest({ now: () => NOW });
    const { id: textId } = await submitMessage(f.deps, apiKey, messageBody('text'));
    const queuedCard = (await submitMessage(f.deps, apiKey, cardBody('button_interaction'))).id;
    const id = await sentCard(f);

    expect((await ingestError(updateCard(f.deps, apiKey, textId, APPROVED))).code).toBe('not_updatable');
    expect((await ingestError(updateCard(f.deps, apiKey, queuedCard, APPROVED))).code).toBe('not_updatable');
    const bad = await ingestError(updateCard(f.deps, apiKey, id, { button: {} }));
    expect(bad).toMatchObject({ code: 'invalid_request', details: [{ field: 'button.replace_name' }] });
    expect(f.cardUpdates).toEqual([]);
    expect(f.messages.records.get(id)?.sendCodeSpent).toBeUndefined();
  });

  it('keeps the task_id on a whole new card, so the next click still finds the message', async () => {
    const f = fakeIngest({ now: () => NOW });
    const id = await sentCard(f);
    const next = cardBody('button_interaction', { task_id: undefined }).template_card;

    await updateCard(f.deps, apiKey, id, { template_card: next, userids: ['alice'] });

    expect(f.cardUpdates[0]).toMatchObject({ userids: ['alice'], template_card: { task_id: id } });
    expect(f.cardUpdates[0]).not.toHaveProperty('atall');
  });
});
