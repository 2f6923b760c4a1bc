import { describe, expect, it } from 'vitest';
import { updateDetail } from '#lib/ingest/card.js';
import { MSG_TYPE_NAMES, ROBOT_MSG_TYPE_NAMES } from '#lib/messages/limits.js';
import { STATUS } from '#lib/model/index.js';
import {
  cardUpdateOf,
  duration,
  errcodeMeaning,
  gauge,
  relative,
  statusTone,
  timestamp,
  userList,
} from '../../../web/console/format.js';
import { MSG_TYPES, ROBOT_MSG_TYPES, STATUSES } from '../../../web/console/vocab.js';

describe('console formatting', () => {
  it("reads a card's current state back from the timeline the gateway writes", () => {
    const replacedBy = (name: string) => updateDetail({ button: { replace_name: name } });
    expect(cardUpdateOf([{ type: 'sent' }])).toEqual({});
    expect(
      cardUpdateOf([
        { type: 'card_updated', detail: replacedBy('先处理') },
        { type: 'card_updated', detail: replacedBy('已处理') },
      ]),
    ).toEqual({ replaceName: '已处理' });
    expect(
      cardUpdateOf([
        { type: 'card_updated', detail: updateDetail({ template_card: { card_type: 'text_notice' } }) },
      ]),
    ).toEqual({ replaced: true });
  });

  it('writes durations as an operator reads them', () => {
    expect([0, 42, 300, 3600, 12_000, 90_000, 86_400].map(duration)).toEqual([
      '0 s',
      '42 s',
      '5 min',
      '1 h',
      '3 h 20 min',
      '1 d 1 h',
      '1 d',
    ]);
  });

  it('says how long ago, or how soon, relative to now', () => {
    const now = Date.parse('2026-12-01T08:00:00Z');
    expect(relative('2026-12-01T07:57:00Z', now)).toBe('3 min ago');
    expect(relative('2026-12-01T08:05:00Z', now)).toBe('in 5 min');
    expect(relative('2026-12-01T08:00:02Z', now)).toBe('just now');
    expect(timestamp('2026-12-01T00:30:05.120Z', 480)).toBe('2026-12-01 08:30:05');
  });

  it('fills a quota gauge against what the gateway allows itself, and marks it high and full', () => {
    expect(gauge(10, 100)).toEqual({ percent: 10, level: 'ok' });
    expect(gauge(85, 100)).toEqual({ percent: 85, level: 'high' });
    expect(gauge(130, 100)).toEqual({ percent: 100, level: 'full' });
    expect(gauge(0, 0)).toEqual({ percent: 0, level: 'ok' });
  });

  it("splits WeCom's a|b lists and gives an errcode its meaning", () => {
    expect(userList('alice|bob')).toEqual(['alice', 'bob']);
    expect(userList('')).toEqual([]);
    expect(errcodeMeaning(60020, 'not allow to access from your ip, from ip: 1.2.3.4')).toContain('1.2.3.4');
    expect(errcodeMeaning(45009)).toMatch(/frequency limit/);
    expect(errcodeMeaning(81013)).toMatch(/refused this message/);
  });

  it('colors statuses by whether they need a look', () => {
    expect(['sent', 'queued', 'dead', 'recalled'].map(statusTone)).toEqual(['good', 'busy', 'bad', 'muted']);
  });

  it("offers exactly the API's statuses and message types as filters", () => {
    expect([...STATUSES]).toEqual(Object.values(STATUS));
    expect([...MSG_TYPES]).toEqual([...MSG_TYPE_NAMES]);
    expect([...ROBOT_MSG_TYPES]).toEqual([...ROBOT_MSG_TYPE_NAMES]);
  });
});
