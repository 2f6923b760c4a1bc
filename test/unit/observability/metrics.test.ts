import { describe, expect, it } from 'vitest';
import { Metrics, metricsNamespace } from '#lib/observability/index.js';

interface EmfLine {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  [key: string]: unknown;
}

function capture() {
  const lines: string[] = [];
  const metrics = new Metrics('sender', {
    namespace: metricsNamespace('prod'),
    write: (line) => lines.push(line),
  });
  return { lines, metrics, parsed: () => lines.map((l) => JSON.parse(l) as EmfLine) };
}

describe('Metrics', () => {
  it('flushes one EMF line whose metric names match the values it carries', () => {
    const { metrics, lines, parsed } = capture();
    metrics.count('Sent');
    metrics.count('Sent', 2);
    metrics.count('Deferred');
    metrics.gauge('QuotaUtilisation', 40);
    metrics.gauge('QuotaUtilisation', 95);
    metrics.gauge('QuotaUtilisation', 60);

    metrics.flush(1_700_000_000_000);

    expect(lines).toHaveLength(1);
    const emf = parsed()[0] as EmfLine;
    const directive = emf._aws.CloudWatchMetrics[0];
    expect(emf._aws.Timestamp).toBe(1_700_000_000_000);
    expect(directive?.Namespace).toBe('WecomGateway/prod');
    expect(directive?.Dimensions).toEqual([[]]);
    expect(directive?.Metrics).toEqual([
      { Name: 'Sent', Unit: 'Count' },
      { Name: 'Deferred', Unit: 'Count' },
      { Name: 'QuotaUtilisation', Unit: 'Percent' },
    ]);
    expect(emf).toMatchObject({ service: 'sender', Sent: 3, Deferred: 1, QuotaUtilisation: 95 });
  });

  it('has a numeric value at the top level for every metric it declares', () => {
    const { metrics, parsed } = capture();
    metrics.count('Accepted', 5);
    metrics.count('GetTokenCalls');

    metrics.flush();

    const emf = parsed()[0] as EmfLine;
    for (const { Name } of emf._aws.CloudWatchMetrics[0]?.Metrics ?? [])
      expect(typeof emf[Name]).toBe('number');
  });

  it("also writes each app's counts as their own series with the app dimension", () => {
    const { metrics, parsed } = capture();
    metrics.count('Sent', 2, { app: 'ops' });
    metrics.count('Sent', 1, { app: 'hr' });
    metrics.count('Failed', 1, { app: 'ops' });
    metrics.count('GetTokenCalls');

    metrics.flush();

    const [total, ops, hr] = parsed();
    expect(total?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([[]]);
    expect(total).toMatchObject({ Sent: 3, Failed: 1, GetTokenCalls: 1 });
    expect(ops?._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: 'WecomGateway/prod',
      Dimensions: [['app']],
      Metrics: [
        { Name: 'Sent', Unit: 'Count' },
        { Name: 'Failed', Unit: 'Count' },
      ],
    });
    expect(ops).toMatchObject({ app: 'ops', Sent: 2, Failed: 1 });
    expect(ops).not.toHaveProperty('GetTokenCalls');
    expect(hr).toMatchObject({ app: 'hr', Sent: 1 });
  });

  it('writes nothing when nothing was recorded', () => {
    const { metrics, lines } = capture();

    metrics.flush();

    expect(lines).toEqual([]);
  });

  it('starts from zero after a flush', () => {
    const { metrics, lines, parsed } = capture();
    metrics.count('Sent', 4);
    metrics.flush();

    metrics.flush();
    metrics.count('Sent');
    metrics.flush();

    expect(lines).toHaveLength(2);
    expect(parsed()[1]?.Sent).toBe(1);
  });
});
