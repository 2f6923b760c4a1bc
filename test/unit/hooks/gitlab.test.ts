import { describe, expect, it } from 'vitest';
import { HookPayloadError, HookSignatureError, handleHook } from '#lib/hooks/index.js';
import { fixture, hookConfig, hookInput, onlyMessage, readable } from '#test/helpers/hook-fixtures.js';
import { statusOf, thrown } from '#test/helpers/thrown.js';

const hook = (over: Record<string, unknown> = {}) => hookConfig({ source: 'gitlab', ...over });
const EVENT: Record<string, string> = {
  push: 'Push Hook',
  'merge_request.merge': 'Merge Request Hook',
  'pipeline.failed': 'Pipeline Hook',
};
const headers = (name: string, extra: Record<string, string> = {}) => ({
  'X-Gitlab-Event': EVENT[name] ?? 'Push Hook',
  'X-Gitlab-Event-UUID': '13792a34-cac6-4fda-95a8-c58e00a3954e',
  'X-Gitlab-Instance': 'https://gitlab.example.com',
  ...extra,
});

describe('gitlab source', () => {
  it.each(Object.keys(EVENT))('renders %s as a template card with a link button', (name) => {
    const message = onlyMessage(handleHook('gl', hook(), hookInput(fixture('gitlab', name), headers(name))));

    expect(readable(message.body)).toMatchSnapshot();
  });

  it('counts the commits GitLab left out of a push (it sends the newest 20 only)', () => {
    const message = onlyMessage(
      handleHook('gl', hook({ msgtype: 'markdown' }), hookInput(fixture('gitlab', 'push'), headers('push'))),
    );
    const content = (message.body.markdown as { content: string }).content;

    expect(content).toContain('4 new commits to master');
    expect(content).toContain('… 2 more commits');
    expect(content).toContain(
      '[Compare](https://gitlab.example.com/mike/diaspora/-/compare/95790bf891e76fee5e1747ab589903a6a1f80f22...da1560886d4f094c3e6c9ef40349f7d38b5d27d7)',
    );
  });

  it('lists the failed jobs of a failed pipeline', () => {
    const message = onlyMessage(
      handleHook(
        'gl',
        hook({ msgtype: 'text' }),
        hookInput(fixture('gitlab', 'pipeline.failed'), headers('pipeline.failed')),
      ),
    );

    expect((message.body.text as { content: string }).content).toContain(
      'test/test-build failed (script_failure)',
    );
  });

  it('answers intermediate pipeline states, MR updates and other event kinds with 2xx and no message', () => {
    const running = JSON.parse(fixture('gitlab', 'pipeline.failed'));
    running.object_attributes.status = 'running';
    const update = JSON.parse(fixture('gitlab', 'merge_request.merge'));
    update.object_attributes.action = 'update';

    expect(
      handleHook('gl', hook(), hookInput(JSON.stringify(running), headers('pipeline.failed'))),
    ).toMatchObject({
      kind: 'ignored',
      event: 'pipeline.running',
    });
    expect(
      handleHook('gl', hook(), hookInput(JSON.stringify(update), headers('merge_request.merge'))),
    ).toMatchObject({
      kind: 'ignored',
      event: 'merge_request.update',
    });
    expect(handleHook('gl', hook(), hookInput('{"object_kind":"note"}', headers('push')))).toMatchObject({
      kind: 'ignored',
      event: 'note',
    });
  });

  it('prefers Idempotency-Key (same across retries, GitLab 17.4+) over X-Gitlab-Event-UUID as delivery key', () => {
    const raw = fixture('gitlab', 'push');
    const withKey = handleHook(
      'gl',
      hook(),
      hookInput(raw, headers('push', { 'Idempotency-Key': 'f5e5f430' })),
    );
    const withoutKey = handleHook('gl', hook(), hookInput(raw, headers('push')));

    expect(withKey.deliveryKey).toBe('f5e5f430');
    expect(withoutKey.deliveryKey).toBe('13792a34-cac6-4fda-95a8-c58e00a3954e');
  });

  describe('X-Gitlab-Token', () => {
    const raw = fixture('gitlab', 'push');

    it('accepts the configured secret token', () => {
      const outcome = handleHook(
        'gl',
        hook({ secret: 'gl-secret' }),
        hookInput(raw, headers('push', { 'X-Gitlab-Token': 'gl-secret' })),
      );

      expect(outcome.kind).toBe('messages');
    });

    it('rejects a wrong token as invalid and a missing one as missing (401)', () => {
      const wrong = thrown(
        () =>
          handleHook(
            'gl',
            hook({ secret: 'gl-secret' }),
            hookInput(raw, headers('push', { 'X-Gitlab-Token': 'gl-secreT' })),
          ),
        HookSignatureError,
      );
      const missing = thrown(
        () => handleHook('gl', hook({ secret: 'gl-secret' }), hookInput(raw, headers('push'))),
        HookSignatureError,
      );

      expect([statusOf(wrong), wrong.code]).toEqual([401, 'hook_signature_invalid']);
      expect([statusOf(missing), missing.code]).toEqual([401, 'hook_signature_missing']);
    });
  });

  it('rejects a payload without object_kind, and a merge request event missing its attributes', () => {
    const noKind = thrown(
      () => handleHook('gl', hook(), hookInput(fixture('alertmanager', 'firing'), headers('push'))),
      HookPayloadError,
    );
    const broken = thrown(
      () =>
        handleHook(
          'gl',
          hook(),
          hookInput('{"object_kind":"merge_request","project":{}}', headers('merge_request.merge')),
        ),
      HookPayloadError,
    );

    expect(noKind.details).toEqual([{ field: 'object_kind', message: 'required' }]);
    expect((broken.details as readonly { field: string }[]).map((d) => d.field)).toEqual([
      'user',
      'project.path_with_namespace',
      'project.web_url',
      'object_attributes',
    ]);
  });
});
