import { describe, expect, it } from 'vitest';
import { HookPayloadError, handleHook } from '#lib/hooks/index.js';
import { utf8Bytes } from '#lib/messages/index.js';
import { fixture, hookConfig, hookInput, onlyMessage, readable } from '#test/helpers/hook-fixtures.js';
import { statusOf, thrown } from '#test/helpers/thrown.js';

const hook = (over: Record<string, unknown> = {}) => hookConfig({ source: 'generic', ...over });
const content = (body: Record<string, unknown>) =>
  ((body[body.msgtype as string] as { content?: string }).content ?? '') as string;

describe('generic source', () => {
  it('renders the common fields of any JSON with the default template', () => {
    const message = onlyMessage(handleHook('up', hook(), hookInput(fixture('generic', 'uptime'))));

    expect(readable(message.body)).toMatchSnapshot();
  });

  it('reaches into arrays and objects with dotted names, without HTML escaping', () => {
    const template =
      '## {{alerts.0.labels.alertname}} on {{alerts.0.labels.instance}}\n{{#alerts}}- {{annotations.summary}}\n{{/alerts}}';
    const payload = {
      alerts: [
        {
          labels: { alertname: 'Disk <full> & slow', instance: 'db-1' },
          annotations: { summary: '"/" at 95%' },
        },
        { labels: { alertname: 'x' }, annotations: { summary: '磁盘已满' } },
      ],
    };

    const message = onlyMessage(handleHook('up', hook({ template }), hookInput(JSON.stringify(payload))));

    expect(content(message.body)).toBe('## Disk <full> & slow on db-1\n- "/" at 95%\n- 磁盘已满');
  });

  it('lists top-level values when no default field is present', () => {
    const message = onlyMessage(
      handleHook('up', hook(), hookInput('{"host":"db-1","load":[1.5,2],"ok":false}')),
    );

    expect(content(message.body)).toBe('**host:** db-1\n**load:** [1.5,2]\n**ok:** false');
  });

  it('answers 400 hook_template_empty when a custom template renders nothing for the payload', () => {
    const err = thrown(
      () => handleHook('up', hook({ template: '{{missing.field}}' }), hookInput('{"a":1}')),
      HookPayloadError,
    );

    expect([statusOf(err), err.code]).toEqual([400, 'hook_template_empty']);
  });

  it('renders text and textcard through the Markdown fallback', () => {
    const text = onlyMessage(
      handleHook('up', hook({ msgtype: 'text' }), hookInput(fixture('generic', 'uptime'))),
    );
    const card = onlyMessage(
      handleHook('up', hook({ msgtype: 'textcard' }), hookInput(fixture('generic', 'uptime'))),
    );

    expect(content(text.body)).toBe(
      'api.example.com is DOWN\n| status: down\nHTTP 503 from https://api.example.com/health for 3 checks\n<a href="https://status.example.com/monitors/17">Open</a>',
    );
    expect(card.body.textcard).toEqual({
      title: 'api.example.com is DOWN',
      description: '| status: down\nHTTP 503 from https://api.example.com/health for 3 checks\nOpen',
      url: 'https://status.example.com/monitors/17',
    });
  });

  it('cuts long output at a line boundary within 2048 bytes', () => {
    const payload = { items: Array.from({ length: 300 }, (_, i) => ({ name: `主机-${i}`, state: '宕机' })) };

    const message = onlyMessage(
      handleHook(
        'up',
        hook({ template: '{{#items}}{{name}}: {{state}}\n{{/items}}' }),
        hookInput(JSON.stringify(payload)),
      ),
    );

    expect(utf8Bytes(content(message.body))).toBeLessThanOrEqual(2048);
    expect(content(message.body)).toMatch(/\n… \d+ more lines$/);
  });

  it('uses the Idempotency-Key header, if the sender sets one, as delivery key', () => {
    const keyed = handleHook(
      'up',
      hook(),
      hookInput(fixture('generic', 'uptime'), { 'Idempotency-Key': 'check-17-down' }),
    );
    const plain = handleHook('up', hook(), hookInput(fixture('generic', 'uptime')));

    expect(keyed.deliveryKey).toBe('check-17-down');
    expect(onlyMessage(plain).idempotencyKey).toBeUndefined();
  });

  it('rejects a body that is not a JSON object or array', () => {
    expect(
      thrown(() => handleHook('up', hook(), hookInput('"just a string"')), HookPayloadError).details,
    ).toEqual([{ field: '(body)', message: 'must be a JSON object or array' }]);
  });

  it('lets a built-in source use a template instead of its own rendering', () => {
    const message = onlyMessage(
      handleHook(
        'prom',
        hookConfig({
          source: 'alertmanager',
          template: '{{status}}: {{commonLabels.alertname}} ({{alerts.length}} alerts)',
        }),
        hookInput(fixture('alertmanager', 'firing')),
      ),
    );

    expect(content(message.body)).toBe('firing: PostgresReplicationLag (2 alerts)');
    expect(message.body.priority).toBe('high');
  });
});

describe('a hook with delaySeconds', () => {
  it('schedules its messages that long after the delivery arrived (send_at), and others not at all', () => {
    const input = hookInput(fixture('generic', 'uptime'));
    const delayed = onlyMessage(handleHook('up', hook({ delaySeconds: 300 }), input));
    expect(delayed.body.send_at).toBe(new Date(input.receivedAt.getTime() + 300_000).toISOString());
    expect(onlyMessage(handleHook('up', hook(), input)).body).not.toHaveProperty('send_at');
  });
});
