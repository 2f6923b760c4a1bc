import { describe, expect, it } from 'vitest';
import type { AppStatus, Reach } from '#cli/api.js';
import { type DoctorInputs, doctorExitCode, runDoctor } from '#cli/doctor.js';
import { ApiError, UnreachableError } from '#cli/errors.js';
import { parseConfig } from '#lib/config/index.js';
import { runInProcess as run } from '#test/helpers/cli-inprocess.js';

const config = parseConfig({
  apps: {
    ops: {
      corpId: 'ww1',
      agentId: 1000002,
      secret: 's',
      callback: { token: 't', encodingAESKey: 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG' },
      markdownFallback: 'text',
    },
  },
  apiKeys: [{ name: 'ci', sha256: 'a'.repeat(64), apps: ['ops'] }],
  hooks: {
    am: { source: 'alertmanager', app: 'ops', to: { touser: 'zhangsan' }, tokenSha256: 'b'.repeat(64) },
  },
});

const healthy: AppStatus = {
  app: 'ops',
  state: 'active',
  pause: null,
  quota: [],
  token: {
    fetched_at: '2026-12-02T00:00:00.000Z',
    age_seconds: 12,
    expires_in_seconds: 7188,
    last_error: null,
  },
};

const NONE = { touser: [], toparty: [], totag: [] };
const answer =
  (over: Partial<Pick<Reach, 'outside' | 'unknown'>> = {}) =>
  async (): Promise<Reach> => ({
    app: 'ops',
    outside: NONE,
    unknown: NONE,
    checked_at: '2026-12-02T00:00:00.000Z',
    ...over,
  });

const inputs = (over: Partial<DoctorInputs> = {}): DoctorInputs => ({
  where: 'local',
  config: { label: 'gateway.json', config, problems: [], placeholders: [] },
  apiUrl: 'http://127.0.0.1:3000',
  appState: async () => healthy,
  reach: answer(),
  ...over,
});

const byName = (checks: Awaited<ReturnType<typeof runDoctor>>) =>
  Object.fromEntries(checks.map((c) => [c.name, c]));

describe('doctor checks', () => {
  it('says ok on every line of a healthy local stack, and exits 0', async () => {
    const checks = await runDoctor(inputs());

    expect(checks.map((c) => `${c.status} ${c.name}`)).toEqual([
      'ok config',
      'ok gateway',
      'ok ops: state',
      'ok ops: gettoken',
      'ok ops: trusted IP',
      'ok ops: callback',
      'ok ops: visible range',
      'ok ops: WeChat plugin',
    ]);
    expect(doctorExitCode(checks)).toBe(0);
  });

  it('fails an open circuit with the errcode hint as the fix, and exits 1', async () => {
    const broken: AppStatus = {
      ...healthy,
      state: 'circuit_open',
      pause: {
        kind: 'config_error',
        errcode: 40001,
        reason: 'invalid credential',
        hint: 'the app secret is wrong: copy it again from the WeCom admin console into the gateway config',
        since: '2026-12-02T00:00:00.000Z',
        until: '2026-12-02T00:05:00.000Z',
        level: 1,
        fails_messages_at: '2026-12-02T01:00:00.000Z',
      },
      token: {
        fetched_at: null,
        age_seconds: null,
        expires_in_seconds: null,
        last_error: { errcode: 40001, class: 'config', failures: 2, retry_at: '2026-12-02T00:05:00.000Z' },
      },
    };

    const checks = byName(await runDoctor(inputs({ appState: async () => broken })));

    expect(checks['ops: state']).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('the app secret is wrong'),
    });
    expect(checks['ops: gettoken']).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('errcode 40001'),
      fix: expect.stringContaining('the app secret is wrong'),
    });
    expect(doctorExitCode(Object.values(checks))).toBe(1);
  });

  it('fails 60020 on a stage as the trusted-IP line, with the 企业可信IP fix', async () => {
    const blocked: AppStatus = {
      ...healthy,
      state: 'circuit_open',
      pause: {
        kind: 'config_error',
        errcode: 60020,
        reason: 'not allow',
        hint: null,
        since: 'a',
        until: 'b',
        level: 1,
        fails_messages_at: 'c',
      },
    };

    const checks = byName(await runDoctor(inputs({ where: 'stage', appState: async () => blocked })));

    expect(checks['ops: trusted IP']).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('企业可信IP'),
    });
  });

  it("fails the trusted-IP and visible-range lines when WeCom answers the gateway's agent/get with 60020", async () => {
    const refused = new ApiError(
      409,
      'wecom_ip_not_trusted',
      "WeCom answered errcode 60020 to agent/get: WeCom rejected the sender's IP 203.0.113.7: add it to the app's trusted IP list (企业可信IP)",
    );

    const checks = byName(
      await runDoctor(
        inputs({
          where: 'stage',
          reach: async () => {
            throw refused;
          },
        }),
      ),
    );

    expect(checks['ops: trusted IP']).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('203.0.113.7'),
    });
    expect(checks['ops: visible range']).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('60020'),
    });
  });

  it('says how to check the visible range by hand when the gateway answers 404 (deployed before reach)', async () => {
    const checks = byName(
      await runDoctor(
        inputs({
          where: 'stage',
          reach: async () => {
            throw new ApiError(404, 'not_found', 'no route GET /v1/apps/ops/reach');
          },
        }),
      ),
    );

    expect(checks['ops: visible range']).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('redeploy'),
      fix: expect.stringContaining('应用管理 > the app > 可见范围 of ops covers user zhangsan'),
    });
    expect(checks['ops: trusted IP']?.status).toBe('ok');
  });

  it('warns when nothing has fetched a token yet, with a test send as the fix', async () => {
    const fresh: AppStatus = {
      ...healthy,
      token: { fetched_at: null, age_seconds: null, expires_in_seconds: null, last_error: null },
    };

    const noRecipients = structuredClone(config);
    delete noRecipients.hooks;

    const checks = byName(
      await runDoctor(
        inputs({
          where: 'stage',
          appState: async () => fresh,
          config: { label: 'f', config: noRecipients, problems: [], placeholders: [] },
        }),
      ),
    );

    expect(checks['ops: gettoken']).toMatchObject({
      status: 'warn',
      fix: expect.stringContaining('wecom-gateway send --app ops'),
    });
    expect(checks['ops: trusted IP']?.status).toBe('warn');
  });

  it('fails a recipient the gateway finds outside the range, and warns about one it cannot place', async () => {
    const asked: unknown[] = [];
    const outside = byName(
      await runDoctor(
        inputs({
          reach: async (_app, ids) => {
            asked.push(ids);
            return answer({ outside: { ...NONE, touser: ['zhangsan'] } })();
          },
        }),
      ),
    );
    const unknown = byName(
      await runDoctor(inputs({ reach: answer({ unknown: { ...NONE, touser: ['zhangsan'] } }) })),
    );
    const inside = byName(await runDoctor(inputs()));

    expect(asked).toEqual([{ touser: ['zhangsan'], toparty: [], totag: [] }]);
    expect(outside['ops: visible range']).toMatchObject({
      status: 'fail',
      detail: 'user zhangsan outside the range',
      fix: expect.stringContaining('应用管理 > the app > 可见范围'),
    });
    expect(doctorExitCode(Object.values(outside))).toBe(1);
    expect(unknown['ops: visible range']?.status).toBe('warn');
    expect(inside['ops: visible range']).toMatchObject({ status: 'ok', detail: 'covers user zhangsan' });
  });

  it('warns about markdown hooks without markdownFallback, and a missing callback, with their fixes', async () => {
    const noFallback = structuredClone(config);
    delete noFallback.apps.ops?.markdownFallback;
    delete noFallback.apps.ops?.callback;

    const checks = byName(
      await runDoctor(inputs({ config: { label: 'f', config: noFallback, problems: [], placeholders: [] } })),
    );

    expect(checks['ops: WeChat plugin']).toMatchObject({
      status: 'warn',
      fix: expect.stringContaining('markdownFallback'),
    });
    expect(checks['ops: callback']).toMatchObject({
      status: 'warn',
      fix: expect.stringContaining('/v1/wecom/callback/ops'),
    });
    expect(doctorExitCode(Object.values(checks))).toBe(0);
  });

  it('stops after an invalid config or an unreachable gateway, each with its fix', async () => {
    const invalid = await runDoctor(
      inputs({ config: { label: 'f', problems: ['apiKeys.0.apps: required'], placeholders: [] } }),
    );
    const down = await runDoctor(
      inputs({
        appState: async () => {
          throw new UnreachableError('http://127.0.0.1:3000', 'connection refused');
        },
      }),
    );
    const wrongKey = await runDoctor(
      inputs({
        appState: async () => {
          throw new ApiError(401, 'unauthorized', 'missing or invalid API key');
        },
      }),
    );

    expect(invalid).toEqual([
      expect.objectContaining({
        status: 'fail',
        name: 'config',
        fix: expect.stringContaining('config check'),
      }),
    ]);
    expect(down.at(-1)).toMatchObject({
      status: 'fail',
      name: 'gateway',
      fix: expect.stringContaining('npm start'),
    });
    expect(wrongKey.at(-1)).toMatchObject({
      status: 'fail',
      name: 'gateway',
      fix: expect.stringContaining('--key'),
    });
  });
});

describe('doctor command', () => {
  it.each([
    [['doctor', '--stage', 'Prod'], '--stage must match'],
    [['doctor', '--region', 'eu-west-1'], '--region and --profile need --stage'],
    [['doctor', '--url', 'ftp://x', '--key', 'wgw_12345678'], 'http(s) URL'],
    [['doctor', '--bogus'], "unknown option '--bogus'"],
  ])('%j is a usage error (exit 2): %s', async (argv, message) => {
    const { code, stdout, stderr } = await run(argv);

    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).toContain('--help');
    expect(stdout).toBe('');
  });
});
