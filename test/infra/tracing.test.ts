import { beforeAll, describe, expect, it } from 'vitest';
import { logicalId, SYNTH_TIMEOUT_MS, type SynthesizedGateway, synthGateway } from './synth.js';

describe('Tracing (stage setting `tracing`)', () => {
  let standard: SynthesizedGateway;
  let traced: SynthesizedGateway;
  beforeAll(() => {
    standard = synthGateway();
    traced = synthGateway({ stage: 'prod', egress: 'fixed', tracing: 'active' });
  }, SYNTH_TIMEOUT_MS);

  const tracingOf = (gateway: SynthesizedGateway) =>
    [gateway.stack.ingest, gateway.stack.sender].map(
      (fn) =>
        gateway.template.findResources('AWS::Lambda::Function')[logicalId(gateway, fn.fn)]?.Properties
          .TracingConfig,
    );

  it('is off by default', () => {
    expect(tracingOf(standard)).toEqual([undefined, undefined]);
  });

  it('turns on Lambda active tracing for every function with tracing=active', () => {
    expect(tracingOf(traced)).toEqual([{ Mode: 'Active' }, { Mode: 'Active' }]);
  });

  it('starts no function with --enable-source-maps, which reads every map at cold start', () => {
    for (const [, fn] of Object.entries(standard.template.findResources('AWS::Lambda::Function'))) {
      const env = (fn.Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
      expect(String(env.NODE_OPTIONS ?? '')).not.toContain('--enable-source-maps');
    }
  });
});
