import { describe, expect, it } from 'vitest';
import { STATUS } from '#lib/model/index.js';
import { processBatch } from '#lib/sender/index.js';
import { WecomApiError, WecomTransportError } from '#lib/wecom/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { lastCopy, queued, ROBOT_KEY, robotRequest, senderHarness } from '#test/helpers/unit-sender.js';

const START = Date.parse('2026-12-01T08:00:07Z');
const FILE = { base64: Buffer.from('line 1\nline 2\n').toString('base64'), filename: 'report.txt' };

describe("a group robot's message", () => {
  it('goes to webhook/send with the robot’s key, no token and no recipients, and is recorded sent', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_robot', START, robotRequest('markdown_v2', { content: '| a | b |' }));
    await h.store.create(m.record);

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    expect(h.robots.posts).toEqual([
      { key: ROBOT_KEY, body: { msgtype: 'markdown_v2', markdown_v2: { content: '| a | b |' } } },
    ]);
    expect(h.wecom.calls).toEqual([]);
    expect(h.store.record('msg_robot')?.status).toBe(STATUS.sent);
  });

  it('uploads a file once through the robot’s upload_media and sends its media id, again for the same bytes', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const first = queued('msg_file_1', START, robotRequest('file', FILE));
    const second = queued('msg_file_2', START, robotRequest('file', FILE));
    await h.store.create(first.record);
    await h.store.create(second.record);

    await processBatch(h.deps, [first.sqs(first.body(), 1)]);
    clock.advance(60_000); // the robot's line has room again
    await processBatch(h.deps, [second.sqs(second.body(), 1)]);

    expect(h.robots.uploads.map((u) => [u.key, u.upload.type, u.upload.filename])).toEqual([
      [ROBOT_KEY, 'file', 'report.txt'],
    ]);
    expect(h.robots.posts.map((p) => p.body)).toEqual([
      { msgtype: 'file', file: { media_id: 'media-1' } },
      { msgtype: 'file', file: { media_id: 'media-1' } },
    ]);
  });

  it('uploads again after WeCom answers 40007 for a cached media id, on the retry', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_file', START, robotRequest('file', FILE));
    await h.store.create(m.record);
    h.robots.script = [() => Promise.reject(new WecomApiError(40007, 'invalid media_id', 'webhook/send'))];

    const { failures } = await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    clock.advance(2_000);
    await processBatch(h.deps, [m.sqs(m.body(), 2)]);

    expect(failures).toHaveLength(1);
    expect(h.robots.uploads).toHaveLength(2);
    expect(h.robots.posts.at(-1)?.body).toEqual({ msgtype: 'file', file: { media_id: 'media-2' } });
    expect(h.store.record('msg_file')?.status).toBe(STATUS.sent);
  });

  it('pauses the robot on 93000 with the reason, and defers its message instead of failing it', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_93000', START, robotRequest());
    await h.store.create(m.record);
    h.robots.script = [() => Promise.reject(new WecomApiError(93000, 'invalid webhook url', 'webhook/send'))];

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    const pause = await h.pauseStore.get('robot:oncall');
    expect(pause).toMatchObject({ kind: 'config_error', errcode: 93000 });
    expect(pause?.reason).toContain("WeCom does not know the robot's key");
    expect(h.store.record('msg_93000')?.status).toBe(STATUS.deferred);
    expect(h.deps.metrics.snapshotDimensioned()['RobotConfigError{robot=oncall}']).toBe(1);
    expect(lastCopy(h).robot).toBe('oncall');
  });

  it('pauses the robot (not any app) on 45009', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_45009', START, robotRequest());
    await h.store.create(m.record);
    h.robots.script = [
      () => Promise.reject(new WecomApiError(45009, 'api freq out of limit', 'webhook/send')),
    ];

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);

    expect(await h.pauseStore.get('robot:oncall')).toMatchObject({ kind: 'rate_limited' });
    expect(await h.pauseStore.get('ops')).toBeUndefined();
  });

  it('never sends again a message whose answer was lost: a robot has no duplicate check', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_lost', START, robotRequest());
    await h.store.create(m.record);
    h.robots.script = [
      () => Promise.reject(new WecomTransportError('timeout', 'UND_ERR_HEADERS_TIMEOUT', { inDoubt: true })),
    ];

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    clock.advance(2_000);
    await processBatch(h.deps, [m.sqs(m.body(), 2)]);

    expect(h.robots.posts).toHaveLength(1);
    expect(h.store.record('msg_lost')?.error).toMatchObject({ code: 'delivery_unknown' });
  });

  it('sends again after an error that proves WeCom did not take it', async () => {
    const clock = fakeClock(START);
    const h = senderHarness(clock.now);
    const m = queued('msg_busy', START, robotRequest());
    await h.store.create(m.record);
    h.robots.script = [() => Promise.reject(new WecomApiError(-1, 'system busy', 'webhook/send'))];

    await processBatch(h.deps, [m.sqs(m.body(), 1)]);
    clock.advance(2_000);
    await processBatch(h.deps, [m.sqs(m.body(), 2)]);

    expect(h.robots.posts).toHaveLength(2);
    expect(h.store.record('msg_busy')?.status).toBe(STATUS.sent);
  });
});
