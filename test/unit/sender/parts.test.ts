import { describe, expect, it } from 'vitest';
import { STATUS } from '#lib/model/index.js';
import { processBatch } from '#lib/sender/index.js';
import { WecomTransportError } from '#lib/wecom/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { busyMember, lastCopy, queued, senderHarness, textRequest } from '#test/helpers/unit-sender.js';

const START = Date.parse('2026-12-01T08:00:07Z');
const lostAnswer = async (): Promise<never> => {
  throw new WecomTransportError('socket hang up after the request was sent', 'ECONNRESET', { inDoubt: true });
};

describe('a message to members whose slots come at different times', () => {
  it('goes at once to those with a slot and later, in a part of its own, to the one at its limit', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    await busyMember(h, 'oncall');
    const m = queued('msg_fan', START, textRequest({ touser: ['a', 'OnCall', 'b'] }));
    await h.store.create(m.record);

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    expect(h.wecom.sends).toHaveLength(1);
    expect(h.wecom.sends[0]).toMatchObject({ touser: 'a|b' });
    const rest = lastCopy(h);
    expect(rest).toMatchObject({ generation: 1, part: { touser: ['OnCall'] } });
    const slot = rest.part?.reservations?.members?.oncall as number;
    expect(slot).toBeGreaterThan(START + 3_000);
    expect(h.store.record('msg_fan')).toMatchObject({
      status: STATUS.deferred,
      parts: [{ touser: ['a', 'b'] }],
    });

    clock.advance(slot - clock.now());
    await processBatch(h.deps, [m.sqs(rest, 1)]);

    expect(h.wecom.sends).toHaveLength(2);
    expect(h.wecom.sends[1]).toMatchObject({ touser: 'OnCall' });
    const record = h.store.record('msg_fan');
    expect(record?.status).toBe(STATUS.sent);
    expect(record?.parts?.map((p) => p.touser)).toEqual([['a', 'b'], ['OnCall']]);
  });

  it('resends a part whose answer was lost as the very same request, then sends the rest as a request of its own', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    await busyMember(h, 'oncall');
    const m = queued('msg_lost', START, textRequest({ touser: ['a', 'oncall', 'b'] }));
    await h.store.create(m.record);
    h.wecom.script.push(lostAnswer);

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    const retry = lastCopy(h);
    expect(retry).toMatchObject({ inDoubt: { since: expect.any(String) }, part: { first: ['a', 'b'] } });
    clock.advance(((h.lanes.enqueued.at(-1)?.delaySeconds ?? 0) + 1) * 1000);
    await processBatch(h.deps, [m.sqs(retry, 1)]);

    expect(h.wecom.sends[1]).toEqual(h.wecom.sends[0]);
    // The rest was never attempted: it carries no lost-answer marker, which would bound its wait by the interval.
    const rest = lastCopy(h);
    expect(rest.part?.touser).toEqual(['oncall']);
    expect(rest).not.toHaveProperty('inDoubt');
  });

  it('resends an unsplit attempt whose answer was lost to all its recipients, waiting for the one now at its limit', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_whole', START, textRequest({ touser: ['a', 'b'] }));
    await h.store.create(m.record);
    h.wecom.script.push(lostAnswer);
    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    expect(h.wecom.sends[0]).toMatchObject({ touser: 'a|b' });
    await busyMember(h, 'b'); // meanwhile b's line fills up

    clock.advance(4_000);
    await processBatch(h.deps, [m.sqs(m.body(), 2)]);

    // Not split into a part for `a` now: that request would differ, and WeCom would not drop it as a repeat.
    expect(h.wecom.sends).toHaveLength(1);
    const waiting = lastCopy(h);
    expect(waiting.part?.reservations?.members).toMatchObject({
      a: expect.any(Number),
      b: expect.any(Number),
    });
    clock.advance(Math.max(...Object.values(waiting.part?.reservations?.members ?? {})) - clock.now());
    await processBatch(h.deps, [m.sqs(waiting, 1)]);

    expect(h.wecom.sends).toHaveLength(2);
    expect(h.wecom.sends[1]).toEqual(h.wecom.sends[0]);
    expect(h.store.record('msg_whole')?.status).toBe(STATUS.sent);
  });
});
