import { describe, expect, it } from 'vitest';
import { handleHook, routeDelivery, valueAt } from '#lib/hooks/index.js';
import { fixture, hookConfig, hookInput, onlyMessage } from '#test/helpers/hook-fixtures.js';

const payload = JSON.parse(fixture('alertmanager', 'firing')) as Record<string, unknown>;

describe('valueAt', () => {
  it('follows dotted paths through objects and array indexes', () => {
    expect(valueAt(payload, 'commonLabels.team')).toBe('db');
    expect(valueAt(payload, 'alerts.1.labels.instance')).toBe('pg-replica-3:9187');
    expect(valueAt(payload, 'alerts.9.labels')).toBeUndefined();
    // An array's length is its own property: `alerts.length` can route large groups.
    expect(valueAt(payload, 'alerts.length')).toBe(2);
  });

  it('never reaches inherited properties', () => {
    expect(valueAt(payload, 'constructor')).toBeUndefined();
    expect(valueAt(payload, '__proto__.toString')).toBeUndefined();
  });
});

describe('routeDelivery', () => {
  const db = { match: { 'commonLabels.team': 'db' }, to: { totag: '7' } };
  const critical = { match: { 'commonLabels.severity': ['critical', 'page'] }, priority: 'high' as const };

  it('applies every matching rule: team=db picks tag 7 and severity=critical raises the priority', () => {
    expect(routeDelivery([db, critical], payload, 'firing')).toEqual({
      matched: [0, 1],
      recipients: { touser: [], toparty: [], totag: ['7'] },
      priority: 'high',
      ignore: false,
    });
  });

  it('unions the recipients of several matching rules, without duplicates', () => {
    const also = { match: { status: 'firing' }, to: { totag: ['7', '9'], touser: 'dba' } };

    expect(routeDelivery([db, also], payload, 'firing').recipients).toEqual({
      touser: ['dba'],
      toparty: [],
      totag: ['7', '9'],
    });
  });

  it('stops after a matching rule with stop', () => {
    expect(routeDelivery([{ ...db, stop: true }, critical], payload, 'firing').matched).toEqual([0]);
  });

  it('lets high win over normal whatever the order', () => {
    const normal = { match: { receiver: 'wecom-gateway' }, priority: 'normal' as const };

    expect(routeDelivery([normal, critical], payload, 'firing').priority).toBe('high');
    expect(routeDelivery([critical, normal], payload, 'firing').priority).toBe('high');
    expect(routeDelivery([normal], payload, 'firing').priority).toBe('normal');
  });

  it('requires every entry of a match, and matches $event, arrays and whole-value regexes', () => {
    const both = { match: { 'commonLabels.team': 'db', $event: 'resolved' }, ignore: true };
    const regex = {
      match: { 'alerts.0.labels.instance': { regex: 'pg-replica-\\d+:9187' } },
      priority: 'high' as const,
    };
    const partial = {
      match: { 'alerts.0.labels.instance': { regex: 'pg-replica' } },
      priority: 'high' as const,
    };

    expect(routeDelivery([both], payload, 'firing').matched).toEqual([]);
    expect(routeDelivery([both], payload, 'resolved').ignore).toBe(true);
    expect(routeDelivery([regex], payload, 'firing').matched).toEqual([0]);
    expect(routeDelivery([partial], payload, 'firing').matched).toEqual([]);
  });

  it('compares numbers and booleans as text and never matches objects', () => {
    const p = { n: 42, b: false, o: { x: 1 } };

    expect(routeDelivery([{ match: { n: '42', b: 'false' } }], p, 'e').matched).toEqual([0]);
    expect(routeDelivery([{ match: { o: '[object Object]' } }], p, 'e').matched).toEqual([]);
  });
});

describe('routing in handleHook', () => {
  it('sends to the rule recipients instead of the hook default, at the rule priority', () => {
    const hook = hookConfig({
      source: 'alertmanager',
      to: { touser: 'oncall' },
      priority: 'normal',
      rules: [
        { match: { 'commonLabels.team': 'db' }, to: { totag: '7' } },
        { match: { 'commonLabels.severity': 'critical' }, priority: 'high' },
      ],
    });

    const { body } = onlyMessage(handleHook('prom', hook, hookInput(fixture('alertmanager', 'firing'))));

    expect([body.touser, body.totag, body.priority]).toEqual([undefined, ['7'], 'high']);
  });

  it('keeps the hook default recipients and fixed priority when no rule matches', () => {
    const hook = hookConfig({
      source: 'alertmanager',
      priority: 'normal',
      rules: [{ match: { 'commonLabels.team': 'web' }, to: { totag: '8' }, priority: 'high' }],
    });

    const { body } = onlyMessage(handleHook('prom', hook, hookInput(fixture('alertmanager', 'firing'))));

    // The hook's fixed priority overrides the source's (critical → high); no rule raised it.
    expect([body.touser, body.totag, body.priority]).toEqual([['oncall'], undefined, 'normal']);
  });

  it('accepts and ignores a delivery a rule ignores (pushes to branches nobody watches)', () => {
    const hook = hookConfig({
      source: 'github',
      rules: [{ match: { $event: 'push', ref: { regex: '(?!refs/heads/main$).*' } }, ignore: true }],
    });
    const headers = { 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': 'd1' };
    const other = JSON.parse(fixture('github', 'push'));
    other.ref = 'refs/heads/feature-x';

    expect(handleHook('gh', hook, hookInput(fixture('github', 'push'), headers)).kind).toBe('messages');
    expect(handleHook('gh', hook, hookInput(JSON.stringify(other), headers))).toMatchObject({
      kind: 'ignored',
      reason: 'ignored by rule 0',
    });
  });
});
