import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import {
  CONTEXT_DEFAULTS,
  DEFAULT_STAGES_FILE,
  readGatewayContext,
  readStagesFile,
} from '../../infra/context.js';

const dir = mkdtempSync(path.join(tmpdir(), 'wecom-gateway-stages-'));
let files = 0;
/** Writes a stages file the way an operator would commit one. */
const stagesFile = (stages: unknown): string => {
  const file = path.join(dir, `stages-${files++}.json`);
  writeFileSync(file, typeof stages === 'string' ? stages : JSON.stringify(stages));
  return file;
};
const read = (context: Record<string, unknown>) => readGatewayContext(new App({ context }));

const PROD = {
  prod: { egress: 'fixed', senderConcurrency: 12, alarmEmail: 'ops@example.com', tracing: 'active' },
};

describe('Stage settings file', () => {
  it('gives a stage its committed settings without any other -c flag', () => {
    expect(read({ stage: 'prod', stagesFile: stagesFile(PROD) })).toMatchObject({
      stage: 'prod',
      egress: 'fixed',
      senderConcurrency: 12,
      alarmEmail: 'ops@example.com',
      tracing: 'active',
    });
  });

  it('lets a -c flag override one setting for one deploy', () => {
    const settings = read({ stage: 'prod', stagesFile: stagesFile(PROD), senderConcurrency: '8' });
    expect(settings).toMatchObject({ senderConcurrency: 8, egress: 'fixed', alarmEmail: 'ops@example.com' });
  });

  it('uses the defaults for a stage the file does not list', () => {
    expect(read({ stage: 'staging', stagesFile: stagesFile(PROD) })).toEqual({
      ...CONTEXT_DEFAULTS,
      stage: 'staging',
    });
  });

  it("refuses a -c egress=default deploy of a stage whose file says 'fixed', naming the way out", () => {
    expect(() => read({ stage: 'prod', stagesFile: stagesFile(PROD), egress: 'default' })).toThrow(
      /stage 'prod' has egress 'fixed'.*60020.*-c allowEgressChange=true/s,
    );
  });

  it('drops the fixed egress when told explicitly with allowEgressChange', () => {
    const settings = read({
      stage: 'prod',
      stagesFile: stagesFile(PROD),
      egress: 'default',
      allowEgressChange: 'true',
    });
    expect(settings.egress).toBe('default');
  });

  it('names an unknown setting in the file (a typo must not silently fall back to a default)', () => {
    const file = stagesFile({ prod: { egres: 'fixed' } });
    expect(() => read({ stage: 'prod', stagesFile: file })).toThrow(/unknown setting\(s\) egres/);
  });

  it('validates file values like -c values', () => {
    const file = stagesFile({ prod: { logRetentionDays: 10 } });
    expect(() => read({ stage: 'prod', stagesFile: file })).toThrow(/context 'logRetentionDays'/);
  });

  it("takes a stage's hook throttles and dedicated hook routes from the file", () => {
    const file = stagesFile({
      prod: { hookRateLimit: 5, hookBurstLimit: 20, hookRoutes: ['prom', 'github'] },
    });
    expect(read({ stage: 'prod', stagesFile: file })).toMatchObject({
      hookRateLimit: 5,
      hookBurstLimit: 20,
      hookRoutes: ['prom', 'github'],
    });
    const bad = stagesFile({ prod: { hookRoutes: ['bad name'] } });
    expect(() => read({ stage: 'prod', stagesFile: bad })).toThrow(/context 'hookRoutes'/);
  });

  it('says which file it could not parse', () => {
    const file = stagesFile('{ "prod": ');
    expect(() => read({ stage: 'prod', stagesFile: file })).toThrow(
      /cannot read stages file .*stages-\d+\.json/,
    );
  });

  it('reuses an Elastic IP allocation only together with fixed egress', () => {
    const file = stagesFile({ prod: { eipAllocationId: 'eipalloc-0123456789abcdef0' } });
    expect(() => read({ stage: 'prod', stagesFile: file })).toThrow(/'eipAllocationId' needs egress 'fixed'/);
  });

  it('ships a committed stages file in which every stage is valid', () => {
    const stages = Object.keys(readStagesFile(DEFAULT_STAGES_FILE));
    expect(stages).toContain('prod');
    for (const stage of stages) expect(read({ stage }).stage).toBe(stage);
  });
});
