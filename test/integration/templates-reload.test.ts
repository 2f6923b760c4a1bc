import { rename, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '#lib/config/index.js';
import { receiveAll, senderContainer } from '#local/harness/sender.js';
import { startTestGateway, type TestGateway } from '#test/helpers/gateway.js';

/** Shortened from the 60 s of production (CONFIG_MAX_AGE_MS), as in config-reload.test.ts. */
const MAX_AGE_MS = 300;
const PAST_MAX_AGE_MS = MAX_AGE_MS + 150;

const withTemplate = (config: GatewayConfig, title: string): GatewayConfig => ({
  ...config,
  apps: {
    ...config.apps,
    ops: {
      ...(config.apps.ops as GatewayConfig['apps'][string]),
      templates: {
        deploy_done: {
          msgtype: 'textcard',
          textcard: { title, description: '{{service}} is live', url: 'https://ci.example.com/{{service}}' },
          variables: { service: { required: true, example: 'api' } },
        },
      },
    },
  },
});

describe('a template edited while messages from it wait (config re-read)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // No sender yet: the first message stays queued until after the edit is in force.
    gw = await startTestGateway({
      startSender: false,
      runtime: { configMaxAgeMs: MAX_AGE_MS },
      configure: (config) => Object.assign(config, withTemplate(config, 'v1: deploy of {{service}}')),
    });
  });
  afterAll(() => gw?.stack.stop());

  it('delivers an accepted message as rendered when it was accepted, not with the edited template', async () => {
    const send = (touser: string) =>
      gw.post('/v1/messages', { app: 'ops', touser, template: 'deploy_done', variables: { service: 'api' } });
    const before = await send('early');
    expect(before.status).toBe(202);

    const edited = withTemplate(gw.stack.config, 'v2: {{service}} deployed');
    const file = gw.stack.env.configFile as string;
    await writeFile(`${file}.tmp`, JSON.stringify(edited));
    await rename(`${file}.tmp`, file);
    await sleep(PAST_MAX_AGE_MS);
    const after = await send('late');
    expect(after.status).toBe(202);

    // A sender that has only the edited config sends both: it never renders, it sends what was accepted.
    const sender = await senderContainer({ ...gw.stack, config: edited });
    const result = await sender.invoke(await receiveAll(gw.stack, 'normal', 2));
    await sender.close();

    expect(result.batchItemFailures).toEqual([]);
    expect(gw.stack.simulator?.inbox('early').map((m) => m.payload)).toEqual([
      { title: 'v1: deploy of api', description: 'api is live', url: 'https://ci.example.com/api' },
    ]);
    expect(gw.stack.simulator?.inbox('late').map((m) => (m.payload as { title: string }).title)).toEqual([
      'v2: api deployed',
    ]);
  });
});
