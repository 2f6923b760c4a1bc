import { describe, expect, it } from 'vitest';
import { HookPayloadError, handleHook } from '#lib/hooks/index.js';
import { fixture, hookConfig, hookInput, onlyMessage, readable } from '#test/helpers/hook-fixtures.js';
import { thrown } from '#test/helpers/thrown.js';

const hook = (over: Record<string, unknown> = {}) => hookConfig({ source: 'grafana', ...over });

describe('grafana source', () => {
  it('renders the documented payload with values, dashboard, panel and silence links', () => {
    const message = onlyMessage(handleHook('graf', hook(), hookInput(fixture('grafana', 'firing'))));

    expect(message.body.priority).toBe('normal');
    expect(readable(message.body)).toMatchSnapshot();
  });

  it("sends Grafana's own templated message when the hook's template asks for it", () => {
    const message = onlyMessage(
      handleHook(
        'graf',
        hook({ template: '{{title}}\n{{message}}' }),
        hookInput(fixture('grafana', 'firing')),
      ),
    );

    expect(message.body.markdown).toEqual({
      content: '[FIRING:2]  (blue)\n**Firing**\n\nLabels:\n - alertname = High memory usage',
    });
  });

  it("rejects Alertmanager's payload naming version and orgId", () => {
    const err = thrown(
      () => handleHook('graf', hook(), hookInput(fixture('alertmanager', 'firing'))),
      HookPayloadError,
    );

    expect((err.details as readonly { field: string }[]).map((d) => d.field)).toEqual(['version', 'orgId']);
  });
});
