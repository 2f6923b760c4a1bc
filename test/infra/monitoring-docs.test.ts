import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SYNTH_TIMEOUT_MS, type SynthesizedGateway, synthGateway } from './synth.js';

const PAGE = path.join(import.meta.dirname, '..', '..', 'docs', 'operations', 'monitoring.md');

/** The runbook sections of the page: its `### \`<alarm id>\`` headings under `## Alarms`. */
function runbookSections(markdown: string): string[] {
  const alarms = markdown.split(/^## /m).find((s) => s.startsWith('Alarms\n')) ?? '';
  return [...alarms.matchAll(/^### `([a-z0-9-]+)`$/gm)].map((m) => m[1] as string);
}

describe('docs/operations/monitoring.md', () => {
  const gateways: SynthesizedGateway[] = [];
  beforeAll(() => {
    gateways.push(synthGateway(), synthGateway({ stage: 'prod', egress: 'fixed' }));
  }, SYNTH_TIMEOUT_MS);

  /** The ids of the stack's alarms: their names without the `<stack>-` prefix (infra/constructs/monitoring.ts). */
  const alarmIds = (gateway: SynthesizedGateway): string[] => {
    const prefix = `${gateway.stack.stackName}-`;
    return Object.values(gateway.template.findResources('AWS::CloudWatch::Alarm')).map((a) => {
      const name: unknown = a.Properties?.AlarmName;
      if (typeof name !== 'string' || !name.startsWith(prefix))
        throw new Error(`alarm name ${JSON.stringify(name)} does not start with ${prefix}`);
      return name.slice(prefix.length);
    });
  };

  it('has a runbook section for every alarm the stack defines, and none for an alarm it does not', () => {
    const sections = runbookSections(readFileSync(PAGE, 'utf8'));
    for (const gateway of gateways) {
      expect([...sections].sort()).toEqual([...new Set(alarmIds(gateway))].sort());
    }
  });

  it('finds the alarms it is meant to check (a broken lookup must not pass)', () => {
    expect(alarmIds(gateways[0] as SynthesizedGateway)).toEqual(
      expect.arrayContaining(['dlq-high', 'age-normal', 'config-error', 'config-reload-failed']),
    );
  });
});
