import type { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { releaseTimerTarget } from '#lib/resources/index.js';
import { LocalClock } from '#local/clock.js';
import { LocalReleaseTimers } from '#local/release-timers.js';

const target = releaseTimerTarget('local', {
  roleArn: 'arn:aws:iam::000000000000:role/local',
  laneArns: { high: 'arn:high', normal: 'arn:normal' },
  deadLetterArn: 'arn:dlq',
});

/** The emulated scheduler against a recording SQS double (no sockets) and a clock the test moves. */
function harness(failSends = 0) {
  const clock = new LocalClock();
  const sent: { url: string; body: string }[] = [];
  let failing = failSends;
  const sqs = {
    send: async (command: SendMessageCommand) => {
      if (failing-- > 0) throw new Error('SQS down');
      sent.push({ url: command.input.QueueUrl as string, body: command.input.MessageBody as string });
      return {};
    },
  };
  const timers = new LocalReleaseTimers({
    sqs: sqs as never,
    clock,
    target: { ...target, retry: { maximumEventAgeSeconds: 3_600, maximumRetryAttempts: 2 } },
    urlOf: (arn) => `url:${arn}`,
  });
  return { clock, sent, timers };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe('LocalReleaseTimers (EventBridge Scheduler one-time schedules, emulated)', () => {
  const stops: (() => void)[] = [];
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it('fires a timer when the clock reaches it, to its lane, and deletes it after', async () => {
    const h = harness();
    stops.push(() => h.timers.stop());
    await h.timers.set({ id: 'msg_1', lane: 'normal', atMs: h.clock.now() + 20 * 60_000 });
    await settle();
    expect(h.sent).toEqual([]);
    h.clock.advance(20 * 60_000);
    await settle();
    expect(h.sent).toEqual([{ url: 'url:arn:normal', body: '{"v":1,"release":{"id":"msg_1"}}' }]);
    expect(h.timers.size()).toBe(0);
    h.clock.advance(60 * 60_000);
    await settle();
    expect(h.sent).toHaveLength(1);
  });

  it('never fires a cleared timer, and says whether there was one to clear', async () => {
    const h = harness();
    stops.push(() => h.timers.stop());
    await h.timers.set({ id: 'msg_1', lane: 'high', atMs: h.clock.now() + 60_000 });
    expect(await h.timers.clear('msg_1')).toBe(true);
    expect(await h.timers.clear('msg_1')).toBe(false);
    h.clock.advance(120_000);
    await settle();
    expect(h.sent).toEqual([]);
  });

  it('retries a failed delivery, then puts the notice in the dead-letter queue when the retries run out', async () => {
    const h = harness(3);
    stops.push(() => h.timers.stop());
    await h.timers.set({ id: 'msg_1', lane: 'normal', atMs: h.clock.now() });
    for (let i = 0; i < 4; i++) {
      await settle();
      h.clock.advance(120_000);
    }
    await settle();
    expect(h.sent).toEqual([{ url: 'url:arn:dlq', body: '{"v":1,"release":{"id":"msg_1"}}' }]);
    expect(h.timers.size()).toBe(0);
  });

  it('sets a timer of an id once (a retried accept)', async () => {
    const h = harness();
    stops.push(() => h.timers.stop());
    await h.timers.set({ id: 'msg_1', lane: 'normal', atMs: h.clock.now() + 1_000 });
    await h.timers.set({ id: 'msg_1', lane: 'normal', atMs: h.clock.now() + 1_000 });
    h.clock.advance(1_000);
    await settle();
    expect(h.sent).toHaveLength(1);
  });
});
