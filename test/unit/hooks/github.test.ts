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

const SECRET = 'gh-webhook-secret';
const DELIVERY = '72d3162e-cc78-11e3-81ab-4c9367dc0958';
const hook = (over: Record<string, unknown> = {}) => hookConfig({ source: 'github', ...over });
const headers = (event: string, extra: Record<string, string> = {}) => ({
  'X-GitHub-Event': event,
  'X-GitHub-Delivery': DELIVERY,
  'User-Agent': 'GitHub-Hookshot/044aadd',
  ...extra,
});

describe('github source', () => {
  it.each([
    ['push', 'push'],
    ['pull_request', 'pull_request.closed'],
    ['issues', 'issues.opened'],
    ['release', 'release.published'],
    ['workflow_run', 'workflow_run.completed'],
  ])('renders %s (%s) as a template card with a link button', (event, name) => {
    const outcome = handleHook('gh', hook(), hookInput(fixture('github', name), headers(event)));

    const message = onlyMessage(outcome);
    expect(message.body.msgtype).toBe('template_card');
    expect((message.body.template_card as { card_action: { url: string } }).card_action.url).toMatch(
      /^https:\/\/github\.com\/octo-org\/gateway/,
    );
    expect(readable(message.body)).toMatchSnapshot();
  });

  it('names a merged pull request "merged" and a failed run "failure", in the event too', () => {
    const pr = handleHook(
      'gh',
      hook(),
      hookInput(fixture('github', 'pull_request.closed'), headers('pull_request')),
    );
    const run = handleHook(
      'gh',
      hook(),
      hookInput(fixture('github', 'workflow_run.completed'), headers('workflow_run')),
    );

    expect(pr.event).toBe('pull_request.merged');
    expect(run.event).toBe('workflow_run.completed');
    expect(JSON.stringify(onlyMessage(run).body)).toContain('"desc":"GitHub · failure","desc_color":2');
  });

  it('renders push as markdown with one line per commit when the hook asks for markdown', () => {
    const message = onlyMessage(
      handleHook('gh', hook({ msgtype: 'markdown' }), hookInput(fixture('github', 'push'), headers('push'))),
    );

    expect(readable(message.body)).toMatchSnapshot();
  });

  it('answers ping without a message', () => {
    const outcome = handleHook('gh', hook(), hookInput(fixture('github', 'ping'), headers('ping')));

    expect(outcome).toEqual({
      kind: 'ignored',
      event: 'ping',
      deliveryKey: DELIVERY,
      reason: 'ping from hook 30',
    });
  });

  it('answers events and actions it does not render without a message', () => {
    const star = handleHook('gh', hook(), hookInput('{"action":"created"}', headers('star')));
    const labeled = JSON.parse(fixture('github', 'pull_request.closed'));
    labeled.action = 'labeled';
    const pr = handleHook('gh', hook(), hookInput(JSON.stringify(labeled), headers('pull_request')));

    expect(star).toMatchObject({ kind: 'ignored', event: 'star' });
    expect(pr).toMatchObject({ kind: 'ignored', event: 'pull_request.labeled' });
  });

  it('uses X-GitHub-Delivery as the delivery key: a redelivery is the same message', () => {
    const first = onlyMessage(
      handleHook('gh', hook(), hookInput(fixture('github', 'push'), headers('push'))),
    );
    const again = onlyMessage(
      handleHook('gh', hook(), hookInput(fixture('github', 'push'), headers('push'))),
    );
    const other = onlyMessage(
      handleHook(
        'gh',
        hook(),
        hookInput(fixture('github', 'push'), headers('push', { 'X-GitHub-Delivery': 'another' })),
      ),
    );

    expect(again).toEqual(first);
    expect(other.idempotencyKey).not.toBe(first.idempotencyKey);
    expect(first.body.metadata).toEqual({ hook: 'gh', source: 'github', event: 'push', delivery: DELIVERY });
  });

  describe('X-Hub-Signature-256', () => {
    const raw = fixture('github', 'push');

    it('accepts a delivery signed with the secret over the raw body', () => {
      const sig = `sha256=${hmacHex(SECRET, raw)}`;

      expect(
        handleHook(
          'gh',
          hook({ secret: SECRET }),
          hookInput(raw, headers('push', { 'X-Hub-Signature-256': sig })),
        ).kind,
      ).toBe('messages');
    });

    it('rejects a signature made with another secret, or over re-serialised JSON, as invalid (401)', () => {
      const wrongSecret = `sha256=${hmacHex('other', raw)}`;
      const reserialised = `sha256=${hmacHex(SECRET, JSON.stringify(JSON.parse(raw)))}`;

      for (const sig of [wrongSecret, reserialised, hmacHex(SECRET, raw)]) {
        const err = thrown(
          () =>
            handleHook(
              'gh',
              hook({ secret: SECRET }),
              hookInput(raw, headers('push', { 'X-Hub-Signature-256': sig })),
            ),
          HookSignatureError,
        );
        expect([statusOf(err), err.code]).toEqual([401, 'hook_signature_invalid']);
      }
    });

    it('rejects a delivery without the header as missing (401) when a secret is set, before reading the body', () => {
      const err = thrown(
        () => handleHook('gh', hook({ secret: SECRET }), hookInput('not json', headers('push'))),
        HookSignatureError,
      );

      expect([statusOf(err), err.code]).toEqual([401, 'hook_signature_missing']);
    });

    it('ignores the header when no secret is set (the URL token authenticates)', () => {
      const outcome = handleHook(
        'gh',
        hook(),
        hookInput(raw, headers('push', { 'X-Hub-Signature-256': 'sha256=00' })),
      );

      expect(outcome.kind).toBe('messages');
    });
  });

  it('rejects a delivery without X-GitHub-Event, naming the header', () => {
    const err = thrown(
      () => handleHook('gh', hook(), hookInput(fixture('github', 'push'))),
      HookPayloadError,
    );

    expect(err.details).toEqual([
      { field: 'headers.x-github-event', message: 'required: GitHub names the event in X-GitHub-Event' },
    ]);
  });

  it('rejects an Alertmanager payload sent as a push event, naming the push fields it lacks', () => {
    const err = thrown(
      () => handleHook('gh', hook(), hookInput(fixture('alertmanager', 'firing'), headers('push'))),
      HookPayloadError,
    );

    expect(err.message).toBe('not a GitHub "push" webhook payload');
    expect((err.details as readonly { field: string }[]).map((d) => d.field)).toEqual([
      'ref',
      'before',
      'after',
      'created',
      'deleted',
      'forced',
      'compare',
      'commits',
      'pusher',
      'repository',
    ]);
  });
});
