import { describe, expect, it } from 'vitest';
import { METRICS_NAMESPACE, Metrics } from '#lib/observability/index.js';

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
  const metrics = new Metrics('sender', (line) => lines.push(line));
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
    expect(directive?.Namespace).toBe('WecomGateway');
    expect(METRICS_NAMESPACE).toBe('WecomGateway');
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
