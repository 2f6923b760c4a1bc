import { beforeAll, describe, expect, it } from 'vitest';
import { LANES, senderEventSources } from '#lib/resources/index.js';
import { assertEventSourcesFit } from '../../infra/gateway-stack.js';
import { logicalId, SYNTH_TIMEOUT_MS, type SynthesizedGateway, synthGateway } from './synth.js';

const CONCURRENCY = 9;

describe('Sender function', () => {
  let gateway: SynthesizedGateway;
  beforeAll(() => {
    gateway = synthGateway({ senderConcurrency: String(CONCURRENCY) });
  }, SYNTH_TIMEOUT_MS);

  const mappings = () =>
    Object.values(gateway.template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (m) =>
        JSON.stringify(m.Properties.FunctionName) ===
        JSON.stringify({ Ref: logicalId(gateway, gateway.stack.sender.fn) }),
    );

  it('reserves the concurrency given in context', () => {
    const sender =
      gateway.template.findResources('AWS::Lambda::Function')[logicalId(gateway, gateway.stack.sender.fn)];
    expect(sender?.Properties.ReservedConcurrentExecutions).toBe(CONCURRENCY);
  });

  it('consumes every lane with partial batch responses', () => {
    expect(mappings()).toHaveLength(LANES.length);
    for (const mapping of mappings()) {
      expect(mapping.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    }
  });

  it("caps the lanes' summed maxConcurrency at its reserved concurrency", () => {
    const total = mappings().reduce(
      (sum, m) => sum + (m.Properties.ScalingConfig.MaximumConcurrency as number),
      0,
    );
    expect(total).toBeLessThanOrEqual(CONCURRENCY);
  });

  it('takes batch size and maxConcurrency per lane from senderEventSources()', () => {
    const expected = senderEventSources(CONCURRENCY)
      .map((s) => [s.batchSize, s.maxConcurrency])
      .sort();
    const actual = mappings()
      .map((m) => [m.Properties.BatchSize, m.Properties.ScalingConfig.MaximumConcurrency])
      .sort();
    expect(actual).toEqual(expected);
  });

  it('refuses to synthesize event sources that exceed reserved concurrency', () => {
    expect(() => assertEventSourcesFit(4, [{ maxConcurrency: 2 }, { maxConcurrency: 3 }])).toThrow(
      /above reserved/,
    );
  });
});
