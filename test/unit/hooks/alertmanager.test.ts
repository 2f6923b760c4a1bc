import { describe, expect, it } from 'vitest';
import { HookPayloadError, handleHook } from '#lib/hooks/index.js';
import { utf8Bytes } from '#lib/messages/index.js';
import {
  fixture,
  hookConfig,
  hookInput,
  onlyMessage,
  RECEIVED_AT,
  readable,
} from '#test/helpers/hook-fixtures.js';
import { statusOf, thrown } from '#test/helpers/thrown.js';

const hook = (over: Record<string, unknown> = {}) => hookConfig({ source: 'alertmanager', ...over });
const firing = () => JSON.parse(fixture('alertmanager', 'firing')) as Record<string, unknown>;

describe('alertmanager source', () => {
  it('renders a firing group as markdown with per-alert source and silence links, priority high for critical', () => {
    const message = onlyMessage(handleHook('prom', hook(), hookInput(fixture('alertmanager', 'firing'))));

    expect(message.body.priority).toBe('high');
    expect(readable(message.body)).toMatchSnapshot();
  });

  it('renders the resolution in green with its end time, priority normal', () => {
    const message = onlyMessage(handleHook('prom', hook(), hookInput(fixture('alertmanager', 'resolved'))));

    expect(message.body.priority).toBe('normal');
    expect(readable(message.body)).toMatchSnapshot();
  });

  it('builds the silence link from externalURL and the alert labels, as the Alertmanager UI reads it', () => {
    const message = onlyMessage(handleHook('prom', hook(), hookInput(fixture('alertmanager', 'firing'))));
    const content = (message.body.markdown as { content: string }).content;

    const links = [...content.matchAll(/\[Silence\]\(([^)]+)\)/g)].map((m) => m[1] ?? '');
    expect(links).toHaveLength(2);
    const url = new URL(links[0] ?? '');
    expect(url.origin).toBe('http://alertmanager.example.com:9093');
    expect(decodeURIComponent(url.hash.replace('#/silences/new?filter=', ''))).toBe(
      '{alertname="PostgresReplicationLag", instance="pg-replica-2:9187", job="postgres", severity="critical", team="db"}',
    );
  });

  it('shows times in the hook time zone', () => {
    const message = onlyMessage(
      handleHook('prom', hook({ timeZone: 'Asia/Shanghai' }), hookInput(fixture('alertmanager', 'firing'))),
    );

    expect((message.body.markdown as { content: string }).content).toContain(
      'since 2026-11-30 16:14:05 GMT+8',
    );
  });

  it('gives retries within the dedup window one idempotency key, and a later repeat or the resolution another', () => {
    const key = (raw: string, at: Date) =>
      onlyMessage(handleHook('prom', hook(), hookInput(raw, {}, at))).idempotencyKey;
    const raw = fixture('alertmanager', 'firing');
    // The 300 s windows are aligned on the epoch: 08:15:00–08:20:00 holds RECEIVED_AT (08:16).
    const first = key(raw, RECEIVED_AT);

    expect(first).toMatch(/^hook_[0-9a-f]{64}$/);
    expect(key(raw, new Date('2026-11-30T08:19:59Z'))).toBe(first);
    expect(key(raw, new Date('2026-11-30T12:16:00Z'))).not.toBe(first);
    expect(key(fixture('alertmanager', 'resolved'), RECEIVED_AT)).not.toBe(first);
    // The same delivery to another hook is another message.
    expect(onlyMessage(handleHook('other', hook(), hookInput(raw))).idempotencyKey).not.toBe(first);
  });

  it('keeps a group of 80 alerts within 2048 bytes and counts the hidden ones, including truncatedAlerts', () => {
    const payload = firing();
    const template = (payload.alerts as Record<string, unknown>[])[0] as Record<string, unknown>;
    payload.alerts = Array.from({ length: 80 }, (_, i) => ({
      ...template,
      labels: { ...(template.labels as object), instance: `pg-replica-${i}:9187` },
      annotations: { description: `复制延迟 ${i} 秒，超过阈值` },
      fingerprint: `f${i}`,
    }));
    payload.truncatedAlerts = 20;

    const message = onlyMessage(handleHook('prom', hook(), hookInput(JSON.stringify(payload))));
    const content = (message.body.markdown as { content: string }).content;

    expect(utf8Bytes(content)).toBeLessThanOrEqual(2048);
    const shown = content.match(/\[firing\]/g)?.length ?? 0;
    expect(shown).toBeGreaterThanOrEqual(2);
    expect(content).toContain(`… ${80 - shown + 20} more alerts`);
    expect(
      content
        .trimEnd()
        .endsWith(
          '[Alertmanager](http://alertmanager.example.com:9093/#/alerts?filter=%7Balertname%3D%22PostgresReplicationLag%22%7D)',
        ),
    ).toBe(true);
  });

  it.each(['text', 'textcard', 'template_card'] as const)(
    'renders as %s when the hook asks for it',
    (msgtype) => {
      const message = onlyMessage(
        handleHook('prom', hook({ msgtype }), hookInput(fixture('alertmanager', 'firing'))),
      );

      expect(message.body.msgtype).toBe(msgtype);
      expect(readable(message.body)).toMatchSnapshot();
    },
  );

  it("rejects Grafana's payload with the version field named, and says which source to use", () => {
    const err = thrown(
      () => handleHook('prom', hook(), hookInput(fixture('grafana', 'firing'))),
      HookPayloadError,
    );

    expect(statusOf(err)).toBe(400);
    expect(err.code).toBe('hook_payload_invalid');
    expect(err.details).toEqual([
      {
        field: 'version',
        message:
          'must be "4" (Alertmanager webhook payload version 4; Grafana sends "1": use source grafana)',
      },
    ]);
  });

  it('rejects a GitHub payload naming every missing field, and a body that is not JSON', () => {
    const err = thrown(
      () => handleHook('prom', hook(), hookInput(fixture('github', 'push'))),
      HookPayloadError,
    );
    const fields = (err.details as readonly { field: string }[]).map((d) => d.field);

    expect(fields).toEqual(
      expect.arrayContaining(['version', 'receiver', 'status', 'groupKey', 'externalURL', 'alerts']),
    );
    expect(
      thrown(() => handleHook('prom', hook(), hookInput('status=firing')), HookPayloadError).details,
    ).toEqual([{ field: '(body)', message: 'must be JSON' }]);
  });

  it('names the alert field that is wrong', () => {
    const payload = firing();
    (payload.alerts as Record<string, unknown>[])[1] = { status: 'pending', labels: 'x', startsAt: '' };

    const err = thrown(
      () => handleHook('prom', hook(), hookInput(JSON.stringify(payload))),
      HookPayloadError,
    );

    expect(err.details).toEqual([
      { field: 'alerts[1].status', message: 'must be firing or resolved' },
      { field: 'alerts[1].labels', message: 'must be an object' },
    ]);
  });
});
