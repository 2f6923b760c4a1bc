import { describe, expect, it } from 'vitest';
import { type CallbackEvent, createCallbackVerifier, dedupeKey } from '#lib/callback/index.js';
import { type CallbackApp, prepareBurst, tallyStored } from '../../../bench/lib/callbacks.js';

const APP: CallbackApp = {
  name: 'ops',
  corpId: 'wwbench0000000001',
  agentId: 1000002,
  token: 'benchToken',
  // 43 base64 characters, as WeCom's console shows them.
  encodingAESKey: Buffer.alloc(32, 7).toString('base64').replace(/=+$/, ''),
};

/** What the gateway makes of a prepared request: every check of the callback function, then the parsed event. */
function receive(request: { path: string; body: string }): CallbackEvent {
  const verifier = createCallbackVerifier({
    token: APP.token,
    encodingAESKey: APP.encodingAESKey,
    corpId: APP.corpId,
  });
  const url = new URL(request.path, 'http://gateway');
  expect(url.pathname).toBe('/v1/wecom/callback/ops');
  return verifier.receive(Object.fromEntries(url.searchParams), request.body);
}

describe('bench callback bursts', () => {
  const burst = prepareBurst(APP, { runId: 'r1', from: 100, count: 40, retryEvery: 10 });
  const events = burst.requests.map(receive);

  it('are callbacks the gateway accepts, one in ten a retry of an earlier one with the same dedupe key', () => {
    expect(burst.requests).toHaveLength(40);
    expect(burst.distinct).toHaveLength(36);
    expect(new Set(events.map((e) => e.kind))).toEqual(new Set(['text', 'menu_click', 'menu_view']));
    const keys = events.map(dedupeKey);
    expect(new Set(keys).size).toBe(36);
    // Each retry repeats a request already posted: its key was seen before it.
    const retries = keys.filter((k, i) => keys.indexOf(k) < i);
    expect(retries).toHaveLength(4);
  });

  it('are refused when sealed for another corp (the verifier above is the real check)', () => {
    const other = prepareBurst(
      { ...APP, corpId: 'wwother' },
      { runId: 'r1', from: 0, count: 1, retryEvery: 10 },
    );
    expect(() => receive(other.requests[0] as { path: string; body: string })).toThrow();
  });

  it('tally what the store holds: once, missing, more than once; other runs ignored', () => {
    const stored = new Map(events.map((e) => [dedupeKey(e), e]));
    const all = [...stored.values()];
    expect(tallyStored(all, 'r1', burst.distinct)).toEqual({ once: 36, missing: [], duplicated: [] });
    const [first, second, ...rest] = all;
    const faulty = [
      first,
      first,
      ...rest,
      ...prepareBurst(APP, { runId: 'r2', from: 100, count: 5, retryEvery: 10 }).requests.map(receive),
    ];
    const tally = tallyStored(faulty, 'r1', burst.distinct);
    expect(tally.once).toBe(34);
    expect(tally.duplicated).toHaveLength(1);
    expect(tally.missing).toHaveLength(1);
    expect(JSON.stringify(second)).toContain(`cb-r1-${tally.missing[0]}`);
  });
});
