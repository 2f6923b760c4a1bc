import { afterEach, describe, expect, it } from 'vitest';
import { multipartMedia } from '#lib/wecom/index.js';
import type { SimulatorOptions, WecomSimulator } from '#local/wecom-sim/index.js';
import { manualClock, type SimAnswer, startTestSimulator } from '#test/helpers/sim-fixtures.js';

const MINUTE = 60_000;
const DAY_START = Date.parse('2026-12-01T00:00:00Z');
const KEY = '693a91f6-7b2c-4bc4-97a0-0ec2f1fa5aaa';
const OTHER_KEY = '0b1c2d3e-4f50-4617-8899-aabbccddeeff';

describe('WeCom simulator › group robots', () => {
  const clock = manualClock(DAY_START + 10 * 3_600_000);
  let sim: WecomSimulator;

  const start = (overrides: Partial<SimulatorOptions> = {}) =>
    startTestSimulator({
      clock: clock.now,
      robots: [
        { key: KEY, name: 'oncall' },
        { key: OTHER_KEY, name: 'dev' },
      ],
      ...overrides,
    }).then((s) => {
      sim = s;
    });
  const post = async (key: string, body: unknown): Promise<SimAnswer> => {
    const res = await fetch(`${sim.url}/cgi-bin/webhook/send?key=${key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await res.json()) as SimAnswer;
  };
  const text = (content: string) => ({ msgtype: 'text', text: { content } });
  const postMany = async (n: number) => {
    const codes: number[] = [];
    for (let i = 0; i < n; i++) codes.push((await post(KEY, text(`m${i}`))).errcode);
    return codes;
  };
  /** 15 sends at hh:mm:59 and 15 at hh:mm+1:00: 30 in one second against a robot's 20 a minute. */
  const burstAcrossMinute = async () => {
    clock.advance(MINUTE - (clock.now() % MINUTE) - 1000);
    const before = await postMany(15);
    clock.advance(1000);
    return [...before, ...(await postMany(15))];
  };
  const upload = async (key: string, type: 'file' | 'voice', filename: string, bytes: Buffer) => {
    const form = multipartMedia({ type, filename, bytes });
    const res = await fetch(`${sim.url}/cgi-bin/webhook/upload_media?key=${key}&type=${type}`, {
      method: 'POST',
      headers: { 'content-type': form.contentType },
      body: form.body,
    });
    return (await res.json()) as SimAnswer;
  };

  afterEach(async () => {
    await sim.stop();
    clock.advance(3_600_000);
  });

  it('posts to the robot’s group and shows it in the inspection API, never by key', async () => {
    await start();

    expect((await post(KEY, text('db-1 down'))).errcode).toBe(0);

    expect(sim.groupInbox('oncall').map((m) => [m.msgtype, m.payload])).toEqual([
      ['text', { content: 'db-1 down' }],
    ]);
    const groups = await (await fetch(`${sim.url}/__sim/groups`)).json();
    expect(groups).toEqual([
      expect.objectContaining({ robot: 'oncall', state: 'active', messages: 1, refused: 0 }),
      expect.objectContaining({ robot: 'dev', messages: 0 }),
    ]);
    expect(JSON.stringify(groups)).not.toContain(KEY);
    expect(JSON.stringify(sim.requests())).not.toContain(KEY);
  });

  it('refuses the 21st message of a rolling minute with 45009, and then blocks the robot for a minute', async () => {
    await start({ readings: { windows: 'rolling' } });

    const codes = await burstAcrossMinute();

    expect(codes).toEqual([...Array(20).fill(0), ...Array(10).fill(45009)]);
    expect(sim.groupInbox('oncall')).toHaveLength(20);
    clock.advance(MINUTE - 1);
    expect((await post(KEY, text('still blocked'))).errcode).toBe(45009);
    clock.advance(1);
    expect((await post(KEY, text('free again'))).errcode).toBe(0);
  });

  it('takes 15 at :59 and 15 at :00 under fixed, epoch-aligned minutes', async () => {
    await start({ readings: { windows: 'fixed' } });

    expect(await burstAcrossMinute()).toEqual(Array(30).fill(0));
  });

  it('answers 93000 for an unknown key or a removed robot, 93004 disabled, 93008 not in the group', async () => {
    await start();

    expect((await post('not-a-key', text('x'))).errcode).toBe(93000);
    for (const [state, errcode] of [
      ['removed', 93000],
      ['disabled', 93004],
      ['not_in_group', 93008],
    ] as const) {
      sim.setRobots([{ key: KEY, state }]);
      expect((await post(KEY, text('x'))).errcode).toBe(errcode);
    }
  });

  it('takes a file by the media id its own upload_media gave, refuses another robot’s', async () => {
    await start();
    const uploaded = await upload(KEY, 'file', '报告.txt', Buffer.from('line 1\nline 2\n'));

    expect(uploaded).toMatchObject({ errcode: 0, type: 'file', media_id: expect.any(String) });
    const file = { msgtype: 'file', file: { media_id: uploaded.media_id } };
    expect((await post(KEY, file)).errcode).toBe(0);
    expect((await post(OTHER_KEY, file)).errcode).toBe(40007);
    expect(sim.groupInbox('oncall')[0]?.payload).toMatchObject({ filename: '报告.txt', size: 14 });
    expect(sim.stats()).toMatchObject({ robotUploadCalls: 1, robotSendCalls: 2, robotDelivered: 1 });
  });

  it('forgets a media id after 3 days', async () => {
    await start();
    const uploaded = await upload(KEY, 'file', 'a.txt', Buffer.from('abcdefgh'));

    clock.advance(3 * 86_400_000 + 1);

    expect((await post(KEY, { msgtype: 'file', file: { media_id: uploaded.media_id } })).errcode).toBe(40007);
  });

  it('takes only AMR as voice and nothing of 5 bytes or less', async () => {
    await start();

    expect((await upload(KEY, 'voice', 'v.mp3', Buffer.from('ID3-not-amr-at-all'))).errcode).toBe(40035);
    expect((await upload(KEY, 'voice', 'v.amr', Buffer.from('#!AMR\nabc'))).errcode).toBe(0);
    expect((await upload(KEY, 'file', 'tiny', Buffer.from('12345'))).errcode).toBe(40035);
  });

  it('holds a robot’s markdown to 4096 bytes and refuses an app-only msgtype', async () => {
    await start();

    expect((await post(KEY, { msgtype: 'markdown', markdown: { content: 'a'.repeat(4096) } })).errcode).toBe(
      0,
    );
    expect(
      (await post(KEY, { msgtype: 'markdown_v2', markdown_v2: { content: 'a'.repeat(4097) } })).errcode,
    ).toBe(40058);
    expect((await post(KEY, { msgtype: 'textcard', textcard: {} })).errcode).toBe(40008);
  });
});
