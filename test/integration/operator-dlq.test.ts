import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMessageId } from '#lib/ingest/ids.js';
import { toWecomSendBody, validateMessageRequest } from '#lib/messages/index.js';
import { encodeQueuedMessage, newRecord, toQueuedMessage } from '#lib/model/index.js';
import { createDocumentClient, DynamoMessageStore } from '#lib/store/index.js';
import { queueDepth } from '#local/harness/sender.js';
import { cli } from '#test/helpers/cli.js';
import { startTestGateway, type TestGateway, waitFor } from '#test/helpers/gateway.js';

/**
 * `wecom-gateway apps status` and `dlq list|redrive` as processes against a local stack whose simulator plays the
 * strict readings (WeCom's duplicate check compares only flagged, byte-identical requests). A message "dies" the
 * way a crashing sender leaves it: its body in the lane's DLQ, its record still `queued`.
 */
describe('wecom-gateway apps status and dlq (as processes, strict readings)', () => {
  let gw: TestGateway;
  let project: string;
  const sim = () => {
    if (!gw.stack.simulator) throw new Error('no simulator');
    return gw.stack.simulator;
  };

  beforeAll(async () => {
    gw = await startTestGateway({ simulator: { readings: 'strict' } });
    // What `npm start` writes for the CLI (local/main.ts), pointing at this stack.
    project = await mkdtemp(join(tmpdir(), 'operator-dlq-'));
    await mkdir(join(project, '.local'));
    const { stack } = gw;
    await writeFile(
      join(project, '.local', 'stack.json'),
      JSON.stringify({
        apiUrl: stack.apiUrl,
        pid: process.pid,
        aws: {
          region: 'us-east-1',
          dynamoEndpoint: stack.dynamoEndpoint,
          sqsEndpoint: stack.sqsEndpoint,
          tableName: stack.resources.tableName,
          queueUrls: stack.resources.queueUrls,
        },
      }),
    );
    await writeFile(join(project, '.local', 'dev-api-key'), `${gw.key}\n`);
  });

  afterAll(async () => {
    await gw?.stack.stop();
    if (project) await rm(project, { recursive: true, force: true });
  });

  /**
   * A message as ingest accepts it (duplicate-check interval fixed at 3600 s), left by a crashed sender in the DLQ.
   * `lostAnswerAgoMs`: an attempt that long ago lost its answer (the record says it may have reached WeCom then).
   */
  async function deadInQueue(user: string, content: string, lostAnswerAgoMs?: number) {
    const validated = validateMessageRequest({
      app: 'ops',
      touser: user,
      msgtype: 'text',
      text: { content },
    });
    if (!validated.ok || validated.value.robot !== undefined) throw new Error(JSON.stringify(validated));
    const request = validated.value;
    const record = newRecord({
      id: newMessageId(),
      app: 'ops',
      priority: 'normal',
      request,
      apiKey: 'test',
      createdAt: new Date(Date.now() - (lostAnswerAgoMs ?? 0)).toISOString(),
      expiresAt: Math.floor(Date.now() / 1000) + 86_400,
      duplicateCheckSeconds: 3600,
    });
    if (lostAnswerAgoMs !== undefined) {
      record.inDoubt = { since: record.createdAt };
    }
    await new DynamoMessageStore(createDocumentClient('test'), gw.stack.env.tableName).create(record);
    await gw.stack.sqs.send(
      new SendMessageCommand({
        QueueUrl: gw.stack.resources.queueUrls['normal-dlq'],
        MessageBody: encodeQueuedMessage(toQueuedMessage(record)),
      }),
    );
    return { ...record, request };
  }

  /** The simulator takes the sender's exact request, and the answer never reaches the gateway. */
  async function deliveredBehindOurBack(record: Awaited<ReturnType<typeof deadInQueue>>) {
    const app = gw.stack.config.apps.ops;
    if (!app) throw new Error('no app');
    const token = (await (
      await fetch(`${sim().url}/cgi-bin/gettoken?corpid=${app.corpId}&corpsecret=${app.secret}`)
    ).json()) as { access_token: string };
    const body = toWecomSendBody(record.request, app.agentId, { duplicateCheckSeconds: 3600 });
    const res = await fetch(`${sim().url}/cgi-bin/message/send?access_token=${token.access_token}`, {
      method: 'POST',
      body: JSON.stringify(body),
    });
    expect(await res.json()).toMatchObject({ errcode: 0 });
  }

  it('lists dead messages as dead, redrives them through the sender, and each arrives exactly once', async () => {
    const crashed = await deadInQueue('dlq-crash', 'the sender crashed on me');
    const reached = await deadInQueue('dlq-reached', 'WeCom took me, the answer got lost');
    await deliveredBehindOurBack(reached);
    expect(sim().inbox('dlq-reached')).toHaveLength(1);

    const [listed, apps] = await Promise.all([
      cli(['dlq', 'list', '--json'], { cwd: project }),
      cli(['apps', 'status', '--json'], { cwd: project }),
    ]);

    expect(listed.code, listed.stderr).toBe(0);
    const views = JSON.parse(listed.stdout).messages;
    expect(views.map((v: { id: string }) => v.id).sort()).toEqual([crashed.id, reached.id].sort());
    for (const v of views) {
      expect(v).toMatchObject({
        lane: 'normal',
        app: 'ops',
        state: 'dead',
        status: 'dead',
        reconciled: true,
      });
    }
    expect((await gw.get(`/v1/messages/${crashed.id}`)).body).toMatchObject({
      status: 'dead',
      error: { code: 'dead_lettered' },
    });
    // Listing removed nothing.
    expect(await queueDepth(gw.stack, 'normal-dlq')).toBe(2);
    expect(apps.code, apps.stderr).toBe(0);
    const health = JSON.parse(apps.stdout);
    expect(health.apps).toEqual([
      expect.objectContaining({ app: 'ops', state: 'active', quota: expect.any(Array) }),
    ]);
    expect(health.queues.lanes).toContainEqual({
      lane: 'normal',
      waiting: 0,
      inFlight: 0,
      delayed: 0,
      dead: 2,
    });

    const redriven = await cli(['dlq', 'redrive', '--lane', 'normal', '--json'], { cwd: project });

    expect(redriven.code, redriven.stderr).toBe(0);
    const out = JSON.parse(redriven.stdout);
    expect(out.summary).toMatchObject({ redriven: 2, refused: 0, failed: 0 });
    for (const record of [crashed, reached]) {
      const status = await gw.waitForStatus(record.id, ['sent', 'failed', 'dead']);
      expect(status.status).toBe('sent');
      expect(status.events.map((e: { type: string }) => e.type)).toEqual([
        'queued',
        'dead',
        'redriven',
        'sent',
      ]);
    }
    await waitFor(async () => (await queueDepth(gw.stack, 'normal')) === 0);
    expect(await queueDepth(gw.stack, 'normal-dlq')).toBe(0);
    expect(
      sim()
        .inbox('dlq-crash')
        .map((m) => m.payload),
    ).toEqual([{ content: 'the sender crashed on me' }]);
    // WeCom's duplicate check dropped the redriven repeat: still one.
    expect(sim().inbox('dlq-reached')).toHaveLength(1);

    const again = await cli(['dlq', 'redrive', '--json'], { cwd: project });
    expect(JSON.parse(again.stdout).results).toEqual([]);
  });

  it('refuses a message WeCom’s duplicate check no longer covers and sends it only with --force', async () => {
    const old = await deadInQueue('dlq-old', 'its answer got lost two hours ago', 2 * 3_600_000);

    const refused = await cli(['dlq', 'redrive', '--ids', old.id], { cwd: project });

    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`${old.id}  refused`);
    expect(refused.stdout).toContain('summary: 1 refused');
    expect(await queueDepth(gw.stack, 'normal-dlq')).toBe(1);
    expect(sim().inbox('dlq-old')).toHaveLength(0);

    const forced = await cli(['dlq', 'redrive', '--ids', old.id, '--force', '--json'], { cwd: project });

    expect(forced.code, forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout).results).toEqual([
      expect.objectContaining({ id: old.id, outcome: 'redriven', detail: expect.stringContaining('forced') }),
    ]);
    expect((await gw.waitForStatus(old.id, ['sent', 'failed'])).status).toBe('sent');
    expect(sim().inbox('dlq-old')).toHaveLength(1);
  });

  it('answers bad arguments of apps status and dlq with usage and exit code 2', async () => {
    const cases: [string[], string][] = [
      [['apps', 'status', 'no such app!'], 'is not an app name'],
      [['apps', 'status', '--stage', 'Prod'], '--stage must match'],
      [['dlq', 'list', '--lane', 'urgent'], 'Allowed choices are high, normal'],
      [['dlq', 'list', '--max', '0'], 'Expected an integer'],
      [['dlq', 'list', '--region', 'eu-west-1'], '--region and --profile need --stage'],
      [['dlq', 'redrive', '--ids', 'nope,msg_ok'], '--ids: not message ids'],
      [['dlq', 'redrive', '--max', 'many'], 'Expected an integer'],
    ];
    const elsewhere = await mkdtemp(join(tmpdir(), 'operator-dlq-nostack-'));
    const runs = await Promise.all([
      ...cases.map(([args]) => cli(args, { cwd: project })),
      cli(['dlq', 'list'], { cwd: elsewhere }),
    ]);
    await rm(elsewhere, { recursive: true, force: true });

    [...cases, [['dlq', 'list'], 'no local stack running'] as [string[], string]].forEach(
      ([args, message], i) => {
        const run = runs[i];
        const label = `wecom-gateway ${args.join(' ')}`;
        expect(run?.code, `${label}\n${run?.stderr}`).toBe(2);
        expect(run?.stdout, label).toBe('');
        expect(run?.stderr, label).toContain(message);
        expect(run?.stderr, label).toContain('--help');
      },
    );
  });
});
