import { describe, expect, it } from 'vitest';
import { HookPayloadError, HookSignatureError, handleHook } from '#lib/hooks/index.js';
import {
  fixture,
  hmacHex,
  hookConfig,
  hookInput,
  onlyMessage,
  readable,
} from '#test/helpers/hook-fixtures.js';
import { statusOf, thrown } from '#test/helpers/thrown.js';

const SECRET = 'sentry-client-secret';
const hook = (over: Record<string, unknown> = {}) => hookConfig({ source: 'sentry', ...over });
const headers = (resource: string, extra: Record<string, string> = {}) => ({
  'Content-Type': 'application/json',
  'Request-ID': '1b0e5f3a-6c53-4ac8-b5b2-4c1d6d0e3a11',
  'Sentry-Hook-Resource': resource,
  'Sentry-Hook-Timestamp': '1796025977',
  ...extra,
});

describe('sentry source', () => {
  it('renders an issue alert (event_alert) as a template card linking to the event', () => {
    const message = onlyMessage(
      handleHook('sentry', hook(), hookInput(fixture('sentry', 'event_alert'), headers('event_alert'))),
    );

    expect(readable(message.body)).toMatchSnapshot();
  });

  it('renders a new issue as a template card linking to the issue', () => {
    const message = onlyMessage(
      handleHook('sentry', hook(), hookInput(fixture('sentry', 'issue.created'), headers('issue'))),
    );

    expect(readable(message.body)).toMatchSnapshot();
  });

  it('keys an issue alert by event id and rule, so a retry under a new Request-ID is the same message', () => {
    const raw = fixture('sentry', 'event_alert');
    const a = handleHook('sentry', hook(), hookInput(raw, headers('event_alert')));
    const b = handleHook(
      'sentry',
      hook(),
      hookInput(raw, headers('event_alert', { 'Request-ID': 'another' })),
    );

    expect(a.deliveryKey).toBe('event_alert:e4874d664c3540c1a32eab185f12c5ab:Very Important Alert Rule!');
    expect(onlyMessage(b).idempotencyKey).toBe(onlyMessage(a).idempotencyKey);
  });

  it('keys issue webhooks by Request-ID', () => {
    const outcome = handleHook(
      'sentry',
      hook(),
      hookInput(fixture('sentry', 'issue.created'), headers('issue')),
    );

    expect(outcome.deliveryKey).toBe('1b0e5f3a-6c53-4ac8-b5b2-4c1d6d0e3a11');
  });

  it('answers installation and other resources without a message', () => {
    const outcome = handleHook(
      'sentry',
      hook(),
      hookInput('{"action":"created","data":{"installation":{}}}', headers('installation')),
    );

    expect(outcome).toMatchObject({ kind: 'ignored', event: 'installation' });
  });

  describe('Sentry-Hook-Signature', () => {
    const raw = fixture('sentry', 'event_alert');

    it('accepts the hex HMAC-SHA256 of the raw body under the client secret', () => {
      const outcome = handleHook(
        'sentry',
        hook({ secret: SECRET }),
        hookInput(raw, headers('event_alert', { 'Sentry-Hook-Signature': hmacHex(SECRET, raw) })),
      );

      expect(outcome.kind).toBe('messages');
    });

    it('rejects a bad signature as invalid and none as missing (401)', () => {
      const bad = thrown(
        () =>
          handleHook(
            'sentry',
            hook({ secret: SECRET }),
            hookInput(raw, headers('event_alert', { 'Sentry-Hook-Signature': hmacHex('wrong', raw) })),
          ),
        HookSignatureError,
      );
      const none = thrown(
        () => handleHook('sentry', hook({ secret: SECRET }), hookInput(raw, headers('event_alert'))),
        HookSignatureError,
      );

      expect([statusOf(bad), bad.code]).toEqual([401, 'hook_signature_invalid']);
      expect([statusOf(none), none.code]).toEqual([401, 'hook_signature_missing']);
    });
  });

  it('requires Sentry-Hook-Resource, and rejects a GitHub payload sent as an event_alert', () => {
    const noHeader = thrown(
      () => handleHook('sentry', hook(), hookInput(fixture('sentry', 'event_alert'))),
      HookPayloadError,
    );
    const foreign = thrown(
      () => handleHook('sentry', hook(), hookInput(fixture('github', 'push'), headers('event_alert'))),
      HookPayloadError,
    );

    expect(noHeader.details).toEqual([
      {
        field: 'headers.sentry-hook-resource',
        message: 'required: Sentry names the resource in Sentry-Hook-Resource',
      },
    ]);
    expect(foreign.details).toEqual([
      { field: 'action', message: 'required' },
      { field: 'data', message: 'required' },
    ]);
  });
});
