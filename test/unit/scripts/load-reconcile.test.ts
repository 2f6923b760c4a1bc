import { describe, expect, it } from 'vitest';
import { profilePhases, scalePhases } from '../../../scripts/load/artillery.js';
import {
  type AcceptedRecord,
  type InboxFinding,
  type RunRecords,
  reconcile,
  type StatusView,
} from '../../../scripts/load/reconcile.js';

const T0 = Date.parse('2026-11-30T08:00:00.000Z');

const accepted = (n: number, to = ['lt0001']): AcceptedRecord => ({
  id: `msg_${n}`,
  token: `lt-run-w-${n}`,
  to,
  priority: 'normal',
  at: T0,
  via: 'single',
});

const sent = (at = T0): StatusView => ({
  status: 'sent',
  created_at: new Date(at).toISOString(),
  sent_at: new Date(at + 40).toISOString(),
});

function records(acc: AcceptedRecord[], extra: Partial<RunRecords> = {}): RunRecords {
  return { accepted: acc, replays: [], sent: new Set(acc.map((a) => a.token)), refused: new Set(), ...extra };
}

/** Inboxes: token → member → receivedAt of each copy. */
function inboxes(copies: Record<string, Record<string, number[]>>): InboxFinding {
  return {
    copies: new Map(Object.entries(copies).map(([t, m]) => [t, new Map(Object.entries(m))])),
    members: 10,
  };
}

describe('load reconciliation', () => {
  it('passes a run where every accepted message is sent and in each inbox once', () => {
    const a = [accepted(1), accepted(2, ['lt0001', 'lt0002'])];
    const rec = reconcile(
      records(a),
      new Map([
        ['msg_1', sent()],
        ['msg_2', sent()],
      ]),
      inboxes({
        'lt-run-w-1': { lt0001: [T0 + 50] },
        'lt-run-w-2': { lt0001: [T0 + 60], lt0002: [T0 + 70] },
      }),
      1000,
    );
    expect(rec).toMatchObject({ accepted: 2, lost: 0, duplicates: [], unexpectedTokens: [], missing: [] });
    expect(rec.deliveryMs.sort()).toEqual([50, 60, 70]);
  });

  it('reports a message that one recipient got twice as a duplicate', () => {
    const rec = reconcile(
      records([accepted(1)]),
      new Map([['msg_1', sent()]]),
      inboxes({ 'lt-run-w-1': { lt0001: [T0 + 50, T0 + 900] } }),
      0,
    );
    expect(rec.duplicates).toEqual(['msg_1']);
  });

  it('counts as lost: not terminal, sent but in no inbox, 404, and unreadable and in no inbox', () => {
    const a = [accepted(1), accepted(2), accepted(3), accepted(4), accepted(5)];
    const rec = reconcile(
      records(a),
      new Map<string, StatusView | 'not_found' | undefined>([
        ['msg_1', { status: 'queued', created_at: new Date(T0).toISOString() }],
        ['msg_2', sent()],
        ['msg_3', 'not_found'],
        ['msg_4', undefined],
        ['msg_5', undefined],
      ]),
      inboxes({ 'lt-run-w-5': { lt0001: [T0 + 80] } }),
      60_000,
    );
    expect(rec.lost).toBe(4);
    expect(rec.unread).toEqual(['msg_4', 'msg_5']);
    expect(rec.byStatus).toMatchObject({ queued: 1, sent: 1, not_found: 1, unread: 2 });
  });

  it('counts an unreadable status as lost when no inbox can be read (a deployed stack)', () => {
    const rec = reconcile(records([accepted(1)]), new Map([['msg_1', undefined]]), undefined, 60_000);
    expect(rec.lost).toBe(1);
  });

  it('flags a refused or never-sent message found in an inbox, but not an unanswered one', () => {
    const rec = reconcile(
      records([], { sent: new Set(['lt-run-w-7', 'lt-run-w-8']), refused: new Set(['lt-run-w-8']) }),
      new Map(),
      inboxes({
        'lt-run-w-7': { lt0003: [T0] }, // sent, no answer (client timeout): may arrive once
        'lt-run-w-8': { lt0003: [T0] }, // answered 4xx: must never arrive
        'lt-run-w-9': { lt0004: [T0] }, // an invalid request's body: must never arrive
      }),
      0,
    );
    expect(rec.unexpectedTokens.sort()).toEqual(['lt-run-w-8', 'lt-run-w-9']);
    expect(rec.unanswered).toEqual({ total: 1, delivered: 1, duplicated: 0 });
  });

  it('reports a replay answered with another id', () => {
    const rec = reconcile(
      records([accepted(1)], {
        replays: [
          { replayOf: 'msg_1', id: 'msg_1', status: 202 },
          { replayOf: 'msg_1', id: 'msg_other', status: 202 },
        ],
      }),
      new Map([['msg_1', sent()]]),
      inboxes({ 'lt-run-w-1': { lt0001: [T0 + 50] } }),
      0,
    );
    expect(rec.replays).toEqual({ total: 2, sameId: 1, mismatched: 1 });
  });
});

describe('load profiles', () => {
  it('reads every profile of load/gateway.yml with numeric durations and rates', async () => {
    for (const name of ['full', 'smoke', 'spike', 'sustained']) {
      const phases = await profilePhases(name);
      expect(phases.length).toBeGreaterThan(0);
      for (const p of phases) {
        expect(p.duration).toBeGreaterThan(0);
        expect(p.arrivalRate).toBeGreaterThan(0);
      }
    }
    expect((await profilePhases('smoke')).reduce((a, p) => a + p.duration, 0)).toBeLessThanOrEqual(30);
  });

  it('stretches a profile to a total duration, keeping its rates', async () => {
    const full = await profilePhases('full');
    const scaled = scalePhases(full, 170);
    expect(scaled.reduce((a, p) => a + p.duration, 0)).toBe(170);
    expect(scaled.map((p) => p.arrivalRate)).toEqual(full.map((p) => p.arrivalRate));
  });

  it('rejects an unknown profile', async () => {
    await expect(profilePhases('nope')).rejects.toThrow(/no load profile "nope"/);
  });
});
