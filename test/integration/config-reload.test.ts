import { rename, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newDevKey } from '#local/dev-config.js';
import { startTestGateway, type TestGateway, text } from '#test/helpers/gateway.js';

/** Shortened from the 60 s of production (CONFIG_MAX_AGE_MS) through the runtime option. */
const MAX_AGE_MS = 300;
/** Waiting past the max age makes the next invocation re-read the file: no race, whatever the load. */
const PAST_MAX_AGE_MS = MAX_AGE_MS + 150;

describe('Config changes on the running local stack (GATEWAY_CONFIG re-read)', () => {
  let gw: TestGateway;
  const logs: string[] = [];
  beforeAll(async () => {
    gw = await startTestGateway({ runtime: { configMaxAgeMs: MAX_AGE_MS }, logWrite: (l) => logs.push(l) });
  });
  afterAll(() => gw?.stack.stop());

  const configFile = () => gw.stack.env.configFile as string;
  /**
   * Replaces the config file in one step, as an editor or a deploy tool does: a plain write lets a container that
   * re-reads at that moment see half a file (its own, correct "keeping the last good config" error, but about
   * truncated JSON instead of the invalid field this test looks for).
   */
  const writeConfig = async (content: string) => {
    await writeFile(`${configFile()}.tmp`, content);
    await rename(`${configFile()}.tmp`, configFile());
  };

  it('keeps the last good config in force when an invalid one is written, and says so', async () => {
    expect((await gw.post('/v1/messages', text('before'))).status).toBe(202);

    // Valid JSON, invalid config: what a bad put-secret-value looks like.
    await writeConfig(JSON.stringify({ apps: { ops: { corpId: 'ww1' } }, apiKeys: [] }));
    await sleep(PAST_MAX_AGE_MS);
    const accepted = await gw.post('/v1/messages', text('after a bad config'));

    expect(accepted.status).toBe(202);
    // The sender kept its config too: the app is still configured, so the message is delivered.
    expect((await gw.waitForStatus(accepted.body.id, ['sent', 'failed', 'dead'])).status).toBe('sent');
    const errors = logs.filter((l) => l.includes('config re-read failed; keeping the last good config'));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]).toContain('apps.ops.agentId');
    expect(logs.some((l) => /"ConfigReloadFailed":\d/.test(l) && l.includes('CloudWatchMetrics'))).toBe(true);
  });

  it('stops accepting a revoked API key, and accepts a new one, within the max age and without a restart', async () => {
    const replacement = newDevKey();
    const config = {
      ...gw.stack.config,
      apiKeys: [{ ...gw.stack.config.apiKeys[0], name: 'replacement', sha256: replacement.sha256 }],
    };
    const withReplacement = { authorization: `Bearer ${replacement.key}` };
    expect((await gw.post('/v1/messages', text('new key, not yet'), withReplacement)).status).toBe(401);

    await writeConfig(JSON.stringify(config));
    await sleep(PAST_MAX_AGE_MS);

    expect((await gw.post('/v1/messages', text('revoked key'))).status).toBe(401);
    expect((await gw.get('/v1/health')).status).toBe(200);
    const accepted = await gw.post('/v1/messages', text('new key'), withReplacement);
    expect(accepted.status).toBe(202);
    expect(logs.some((l) => l.includes('config changed; now in force'))).toBe(true);
  });
});
