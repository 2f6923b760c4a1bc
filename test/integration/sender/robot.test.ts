import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { type GatewayConfig, parseConfig } from '#lib/config/index.js';
import { sha256Hex } from '#lib/security/index.js';
import { verifyWebhook } from '#lib/webhooks/index.js';
import { TEST_WEBHOOK_SECRET } from '#local/harness/config.js';
import { cli } from '#test/helpers/cli.js';
import { scaledMinutes, startTestGateway, type TestGateway, waitFor } from '#test/helpers/gateway.js';
import { fixture } from '#test/helpers/hook-fixtures.js';
import { ROBOT_KEY, robotMarkdown, withRobot } from '#test/helpers/robots.js';
import { HOOKS_TLS, startWebhookReceiver, webhookResolver } from '#test/helpers/webhook-receiver.js';

/**
 * A group robot through the whole local stack, against the simulator's strict readings (every rolling minute
 * counted, the 21st message refused with 45009). WeCom's minute runs as 4 seconds in the gateway and the simulator
 * alike (scaledMinutes), so the robot's 16 a minute (`high`; 20 less the margin) are 250 ms apart.
 */
const MINUTE_MS = 4_000;
const contentOf = (payload: unknown) => (payload as { content: string }).content;

describe('a group robot, end to end', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.stack.stop();
    gw = undefined;
  });
  /** Every log line of the stack's functions, to check that the robot's key never reaches one. */
  let logs: string[] = [];
  const start = async (
    opts: { configProbeMs?: readonly number[]; configure?: (config: GatewayConfig) => void } = {},
  ) => {
    const scaled = scaledMinutes(MINUTE_MS);
    logs = [];
    gw = await startTestGateway({
      ...scaled,
      simulator: { ...scaled.simulator, readings: 'strict' },
      runtime: {
        ...scaled.runtime,
        ...(opts.configProbeMs ? { configProbeMs: opts.configProbeMs } : {}),
        logWrite: (line: string) => logs.push(line),
      },
      configure: opts.configure ?? withRobot,
    });
    const sim = gw.stack.simulator;
    if (!sim) throw new Error('no simulator');
    return { gw, sim };
  };

  it('opens the robot’s circuit on 93000, says why, and delivers what waited once the robot is back', {
    timeout: 30_000,
  }, async () => {
    // The circuit stays open 4 s before a probe, long enough for the API checks below under a loaded CI.
    const { gw, sim } = await start({ configProbeMs: [4_000] });
    sim.setRobots([{ key: ROBOT_KEY, state: 'removed' }]);

    const ids: string[] = [];
    for (const i of [1, 2, 3]) ids.push((await gw.post('/v1/messages', robotMarkdown(`waits ${i}`))).body.id);
    for (const id of ids) await gw.waitForStatus(id, ['deferred']);

    const state = await gw.get('/v1/robots/oncall');
    expect(state.status).toBe(200);
    expect(state.body).toMatchObject({
      robot: 'oncall',
      state: 'circuit_open',
      pause: { kind: 'config_error', errcode: 93000, hint: expect.stringContaining("robot's key") },
      quota: [expect.objectContaining({ window: 'robot-minute', limit: 20, allowed: 16 })],
    });
    expect(JSON.stringify(state.body)).not.toContain(ROBOT_KEY);
    // The functions logged the refusal, and never the key that WeCom refused.
    expect(logs.some((l) => l.includes('93000'))).toBe(true);
    expect(logs.filter((l) => l.includes(ROBOT_KEY))).toEqual([]);
    expect((await gw.get('/v1/robots')).body).toEqual({
      robots: [{ robot: 'oncall', state: 'circuit_open' }],
    });
    // The operator's view: `apps status` shows the robot beside the apps, and exits 1 while it is not active.
    // Spawning the CLI can outlast the open circuit, after which the robot is `probing` (still not active).
    const status = await cli(['apps', 'status', '--url', gw.stack.apiUrl, '--key', gw.key, '--json'], {
      cwd: tmpdir(),
    });
    expect(status.code, status.stderr).toBe(1);
    expect(JSON.parse(status.stdout).robots).toEqual([
      expect.objectContaining({
        robot: 'oncall',
        state: expect.stringMatching(/^(circuit_open|probing)$/),
        pause: expect.objectContaining({ errcode: 93000 }),
      }),
    ]);
    expect(status.stdout + status.stderr).not.toContain(ROBOT_KEY);

    sim.setRobots([{ key: ROBOT_KEY, state: 'active' }]);
    for (const id of ids) await gw.waitForStatus(id, ['sent'], 20_000);
    expect(
      sim
        .groupInbox('oncall')
        .map((m) => contentOf(m.payload))
        .sort(),
    ).toEqual(['waits 1', 'waits 2', 'waits 3']);
    expect((await gw.get('/v1/robots/oncall')).body.state).toBe('active');
  });

  it('uploads a file once through the robot’s upload_media and sends its media id twice', {
    timeout: 30_000,
  }, async () => {
    const { gw, sim } = await start();
    const file = {
      base64: Buffer.from('date,host,disk\n2026-12-01,db-1,91%\n').toString('base64'),
      filename: 'disk.csv',
    };

    const first = await gw.post('/v1/messages', { robot: 'oncall', msgtype: 'file', file });
    await gw.waitForStatus(first.body.id, ['sent']);
    const second = await gw.post('/v1/messages', { robot: 'oncall', msgtype: 'file', file });
    await gw.waitForStatus(second.body.id, ['sent']);

    expect(sim.stats().robotUploadCalls).toBe(1);
    const sent = sim.groupInbox('oncall').map((m) => m.payload as { media_id: string; filename: string });
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatchObject({ filename: 'disk.csv' });
    expect(sent[1]?.media_id).toBe(sent[0]?.media_id);
    // The status shows the robot, not an app, and what the client sent.
    const status = (await gw.get(`/v1/messages/${first.body.id}`)).body;
    expect(status).toMatchObject({ robot: 'oncall', status: 'sent', body: { msgtype: 'file' } });
    expect(status.app).toBeUndefined();
  });

  it('takes an Alertmanager delivery and a push for the robot, and posts them to its group', {
    timeout: 30_000,
  }, async () => {
    const { gw, sim } = await start({
      configure: (config) => {
        withRobot(config);
        Object.assign(
          config,
          parseConfig({
            ...config,
            hooks: {
              prom: { source: 'alertmanager', robot: 'oncall', tokenSha256: sha256Hex('token-prom') },
            },
            pushKeys: [{ name: 'cron', robot: 'oncall', sha256: sha256Hex('sendkey-cron') }],
          }),
        );
      },
    });

    const hook = await fetch(`${gw.stack.apiUrl}/v1/hooks/prom/token-prom`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: fixture('alertmanager', 'firing'),
    });
    const push = await fetch(`${gw.stack.apiUrl}/v1/push/sendkey-cron?title=Backup%20done`);
    expect([hook.status, push.status]).toEqual([202, 200]);
    await waitFor(() => sim.groupInbox('oncall').length >= 2, 20_000);

    const posted = sim.groupInbox('oncall').map((m) => [m.msgtype, contentOf(m.payload).split('\n')[0]]);
    expect(posted).toEqual(
      expect.arrayContaining([
        ['markdown_v2', '## [FIRING:2] PostgresReplicationLag'],
        ['markdown', '## Backup done'],
      ]),
    );
  });

  it('tells the business a robot’s message was sent, with a webhook signed by the robot’s secret', {
    timeout: 30_000,
  }, async () => {
    const receiver = await startWebhookReceiver();
    try {
      const scaled = scaledMinutes(MINUTE_MS);
      gw = await startTestGateway({
        ...scaled,
        runtime: { ...scaled.runtime, webhookResolve: webhookResolver().resolve, webhookCa: HOOKS_TLS.cert },
        configure: (config) => {
          withRobot(config);
          const robot = config.robots?.oncall;
          if (robot)
            robot.webhook = {
              secrets: [TEST_WEBHOOK_SECRET],
              allowedPorts: [receiver.port],
              events: ['message.sent'],
            };
        },
      });

      const sent = await gw.post(
        '/v1/messages',
        robotMarkdown('with a webhook', { callback_url: receiver.url('/robot') }),
      );
      await waitFor(() => receiver.received.length > 0, 20_000);

      const [webhook] = receiver.received;
      expect(webhook?.json).toMatchObject({
        type: 'message.sent',
        data: { id: sent.body.id, robot: 'oncall' },
      });
      expect(webhook?.json.data.app).toBeUndefined();
      expect(() =>
        verifyWebhook({
          secrets: [TEST_WEBHOOK_SECRET],
          headers: webhook?.headers ?? {},
          body: webhook?.body ?? '',
        }),
      ).not.toThrow();
    } finally {
      await receiver.stop();
    }
  });

  it('answers 400 naming an app-only field on a robot, and stores and queues nothing', async () => {
    const { gw, sim } = await start();

    const res = await gw.post('/v1/messages', robotMarkdown('x', { touser: 'zhangsan', safe: 1 }));

    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      expect.objectContaining({ field: 'touser', message: expect.stringContaining('touser is for apps') }),
      expect.objectContaining({ field: 'safe', message: expect.stringContaining('safe is for apps') }),
    ]);
    expect((await gw.get('/v1/messages?app=ops')).body.messages).toEqual([]);
    expect(sim.stats().robotSendCalls).toBe(0);
  });
});
