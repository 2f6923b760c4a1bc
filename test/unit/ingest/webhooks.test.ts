import { describe, expect, it } from 'vitest';
import { toDeliveries } from '#lib/ingest/index.js';
import type { WebhookAttempt } from '#lib/store/index.js';

const attempt = (over: Partial<WebhookAttempt> & Pick<WebhookAttempt, 'at' | 'attempt'>): WebhookAttempt => ({
  webhookId: 'msg_1:message.sent',
  type: 'message.sent',
  target: 'https://hooks.example.com/status',
  outcome: 'delivered',
  statusCode: 200,
  latencyMs: 40,
  ...over,
});

describe('toDeliveries', () => {
  it('groups attempts by webhook id, oldest attempt first, newest delivery first', () => {
    const newestFirst = [
      attempt({ webhookId: 'evt_2', type: 'wecom.event', at: '2026-12-01T08:05:00.000Z', attempt: 1 }),
      attempt({ at: '2026-12-01T08:00:30.000Z', attempt: 2 }),
      attempt({
        at: '2026-12-01T08:00:00.000Z',
        attempt: 1,
        outcome: 'retry',
        statusCode: 500,
        reason: 'HTTP 500',
        retryInSeconds: 30,
      }),
    ];

    const deliveries = toDeliveries(newestFirst);

    expect(deliveries.map((d) => [d.id, d.status, d.attempts.map((a) => a.attempt)])).toEqual([
      ['evt_2', 'delivered', [1]],
      ['msg_1:message.sent', 'delivered', [1, 2]],
    ]);
    expect(deliveries[1]?.attempts[0]).toEqual({
      at: '2026-12-01T08:00:00.000Z',
      attempt: 1,
      outcome: 'retry',
      status_code: 500,
      latency_ms: 40,
      error: 'HTTP 500',
    });
    expect(deliveries[1]).not.toHaveProperty('next_attempt_at');
  });

  it('gives a delivery still retrying its next attempt time: start, latency and backoff', () => {
    // No answer: the attempt has no status code.
    const { statusCode: _none, ...unanswered } = attempt({
      at: '2026-12-01T08:00:00.000Z',
      attempt: 3,
      outcome: 'retry',
      latencyMs: 1500,
      reason: 'ECONNREFUSED: connect ECONNREFUSED',
      retryInSeconds: 120,
    });
    const [delivery] = toDeliveries([unanswered]);

    expect(delivery).toMatchObject({ status: 'retrying', next_attempt_at: '2026-12-01T08:02:01.500Z' });
    expect(delivery?.attempts[0]).toMatchObject({ error: 'ECONNREFUSED: connect ECONNREFUSED' });
    expect(delivery?.attempts[0]).not.toHaveProperty('status_code');
  });

  it.each([
    ['gone', 'gone'],
    ['refused', 'refused'],
    ['dead', 'dead'],
  ] as const)('calls a delivery whose last attempt was %s %s, with no next attempt', (outcome, status) => {
    const [delivery] = toDeliveries([
      attempt({ at: '2026-12-01T08:00:00.000Z', attempt: 1, outcome, retryInSeconds: 5 }),
    ]);
    expect(delivery?.status).toBe(status);
    expect(delivery).not.toHaveProperty('next_attempt_at');
  });
});
