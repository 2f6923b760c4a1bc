import { describe, expect, it } from 'vitest';
import type { HookConfig, PushKeyConfig } from '#lib/config/index.js';
import { handleHook, pushToMessage } from '#lib/hooks/index.js';

const hook = {
  source: 'generic',
  app: 'ops',
  to: { touser: 'oncall' },
  tokenSha256: 'b'.repeat(64),
  appTemplate: { id: 'deploy_done', variables: { service: '{{repo.name}}', note: '{{missing}}' } },
  timeZone: 'UTC',
  dedupSeconds: 300,
} as HookConfig;

describe('hooks and push keys that name an app template', () => {
  it('turns a delivery into template + variables rendered from the payload (ingest renders the body)', () => {
    const rawBody = Buffer.from(JSON.stringify({ repo: { name: '"}{{x}}' } }));

    const outcome = handleHook('ci', hook, { rawBody, headers: {}, receivedAt: new Date(0) });

    expect(outcome.kind === 'messages' && outcome.messages[0]?.body).toMatchObject({
      app: 'ops',
      touser: ['oncall'],
      template: 'deploy_done',
      variables: { service: '"}{{x}}', note: '' },
    });
    expect(outcome.kind === 'messages' && outcome.messages[0]?.body).not.toHaveProperty('msgtype');
  });

  it("passes a push's title, desp and short as the variables", () => {
    const key = {
      name: 'cron',
      sha256: 'c'.repeat(64),
      app: 'ops',
      to: { touser: 'admin' },
      msgtype: 'markdown',
      priority: 'normal',
      template: 't',
    } as PushKeyConfig;

    expect(pushToMessage(key, { title: 'Backup done', desp: '3 files' })).toEqual({
      app: 'ops',
      touser: ['admin'],
      priority: 'normal',
      metadata: { push: 'cron' },
      template: 't',
      variables: { title: 'Backup done', desp: '3 files' },
    });
  });
});
