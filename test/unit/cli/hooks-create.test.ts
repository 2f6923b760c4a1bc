import { createHmac } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editStageWith } from '#cli/config-edit.js';
import { parseConfigJson } from '#lib/config/index.js';
import { createHookFinder } from '#lib/hooks/auth.js';
import { createPushKeyMatcher } from '#lib/hooks/push.js';
import { createAuthenticator } from '#lib/ingest/auth.js';
import { runInProcess as run } from '#test/helpers/cli-inprocess.js';

/** A hand-written config with things the schema would fill in or reorder, which an edit must leave alone. */
const original = {
  $comment: 'ours',
  apps: { ops: { corpId: 'ww1', agentId: 1000002, secret: 'app-secret' } },
  apiKeys: [{ name: 'ci', sha256: 'a'.repeat(64), apps: ['ops'] }],
  hooks: { old: { source: 'generic', app: 'ops', to: { touser: 'x' }, tokenSha256: 'b'.repeat(64) } },
  retentionDays: 7,
};

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-hooks-'));
  file = join(dir, 'gateway.json');
  await writeFile(file, JSON.stringify(original, null, 2));
  await chmod(file, 0o640);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const tokenOf = (url: string) => url.split('/').pop() as string;

describe('hooks create', () => {
  it('adds the hook with only the token hash, keeps the rest of the file, and the gateway authenticates the URL', async () => {
    const { code, stdout, stderr } = await run(
      [
        'hooks',
        'create',
        '--source',
        'alertmanager',
        '--app',
        'ops',
        '--to',
        'zhangsan,lisi',
        '--file',
        'gateway.json',
        '--json',
      ],
      { cwd: dir },
    );

    expect(code).toBe(0);
    expect(stderr).toContain("the URL uses npm start's default address");
    const printed = JSON.parse(stdout);
    expect(printed.url).toMatch(/^http:\/\/127\.0\.0\.1:3000\/v1\/hooks\/alertmanager\/[A-Za-z0-9_-]{32}$/);
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(tokenOf(printed.url));
    const raw = JSON.parse(text);
    expect(raw).toEqual({
      ...original,
      hooks: {
        ...original.hooks,
        alertmanager: {
          source: 'alertmanager',
          app: 'ops',
          to: { touser: 'zhangsan|lisi' },
          tokenSha256: printed.entry.tokenSha256,
        },
      },
    });
    const config = parseConfigJson(text);
    expect(createHookFinder(config.hooks ?? {})('alertmanager', tokenOf(printed.url))?.source).toBe(
      'alertmanager',
    );
    expect(createHookFinder(config.hooks ?? {})('old', tokenOf(printed.url))).toBeUndefined();
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    expect(await readdir(dir)).toEqual(['gateway.json']);
  });

  it('prints the URL once with the vendor snippet, and for GitHub a generated secret the config holds', async () => {
    const human = await run([
      'hooks',
      'create',
      '--source',
      'alertmanager',
      '--app',
      'ops',
      '--party',
      '2',
      '--name',
      'prom',
      '--file',
      file,
      '--url',
      'https://gw.example.com/',
    ]);
    const gh = await run([
      'hooks',
      'create',
      '--source',
      'github',
      '--app',
      'ops',
      '--to',
      'dev',
      '--file',
      file,
      '--json',
    ]);

    expect(human.code).toBe(0);
    const url = human.stdout.match(/https:\/\/gw\.example\.com\/v1\/hooks\/prom\/\S+/)?.[0] as string;
    expect(human.stdout.split(url).length - 1).toBe(2); // the URL line and the alertmanager.yml snippet
    expect(human.stdout).toContain('webhook_configs:');
    expect(human.stdout).toContain('shown only this once');
    const { secret, url: ghUrl } = JSON.parse(gh.stdout);
    const config = parseConfigJson(await readFile(file, 'utf8'));
    expect(config.hooks?.github?.secret).toBe(secret);
    expect(config.hooks?.prom?.to).toEqual({ toparty: '2' });
    // What GitHub will send: the gateway verifies X-Hub-Signature-256 with the stored secret.
    const sig = createHmac('sha256', secret).update('{}').digest('hex');
    expect(sig).toBe(
      createHmac('sha256', config.hooks?.github?.secret as string)
        .update('{}')
        .digest('hex'),
    );
    expect(createHookFinder(config.hooks ?? {})('github', tokenOf(ghUrl))).toBeDefined();
  });

  it.each([
    [['hooks', 'create', '--app', 'ops', '--to', 'a'], "required option '-s, --source <source>'"],
    [
      ['hooks', 'create', '--source', 'jira', '--app', 'ops', '--to', 'a'],
      'Allowed choices are alertmanager, grafana',
    ],
    [['hooks', 'create', '--source', 'generic', '--app', 'ops'], 'no recipient: pass --to, --party or --tag'],
    [
      ['hooks', 'create', '--source', 'generic', '--app', 'opz', '--to', 'a'],
      '--app: app "opz" is not configured in gateway.json (apps: ops)',
    ],
    [
      ['hooks', 'create', '--source', 'generic', '--app', 'ops', '--to', 'a', '--name', 'old'],
      '--name: gateway.json already has a hook "old"',
    ],
    [
      ['hooks', 'create', '--source', 'generic', '--app', 'ops', '--to', 'a', '--name', 'a/b'],
      '--name: hook names are 1-64',
    ],
    [
      ['hooks', 'create', '--source', 'generic', '--app', 'ops', '--to', '@all,a'],
      '--to/--party/--tag: touser: @all must be the only entry',
    ],
    [
      [
        'hooks',
        'create',
        '--source',
        'generic',
        '--app',
        'ops',
        '--to',
        'a',
        '--stage',
        'prod',
        '--file',
        'gateway.json',
      ],
      'give --file or --stage, not both',
    ],
    [
      ['hooks', 'create', '--source', 'generic', '--app', 'ops', '--to', 'a', '--region', 'x'],
      '--region and --profile need --stage',
    ],
    [['push-keys', 'create', '--app', 'ops'], 'no recipient'],
    [
      ['push-keys', 'create', '--to', 'a'],
      'pass --app (with --to, --party or --tag) or --robot, one of them',
    ],
    [
      ['push-keys', 'create', '--app', 'ops', '--to', 'a', '--msgtype', 'news'],
      'Allowed choices are markdown, markdown_v2, text, textcard',
    ],
    [
      ['hooks', 'create', '--source', 'grafana', '--app', 'ops', '--robot', 'oncall', '--to', 'a'],
      'one of them',
    ],
    [
      ['hooks', 'create', '--source', 'grafana', '--robot', 'oncall', '--to', 'a'],
      '--robot: a robot posts to its group chat; drop --to, --party and --tag',
    ],
    [
      ['hooks', 'create', '--source', 'grafana', '--robot', 'oncall'],
      '--robot: robot "oncall" is not configured in gateway.json (robots: none)',
    ],
  ])('%j is a usage error (exit 2) that leaves the file alone: %s', async (argv, message) => {
    const args =
      argv.includes('--stage') || argv.includes('--file') ? argv : [...argv, '--file', 'gateway.json'];
    const before = await readFile(file, 'utf8');

    const { code, stdout, stderr } = await run(args, { cwd: dir });

    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).toContain('--help');
    expect(stdout).toBe('');
    expect(await readFile(file, 'utf8')).toBe(before);
  });

  it('with --stage and no terminal, asks for --yes before touching AWS (exit 2)', async () => {
    const { code, stderr } = await run([
      'hooks',
      'create',
      '--source',
      'generic',
      '--app',
      'ops',
      '--to',
      'a',
      '--stage',
      'prod',
    ]);

    expect(code).toBe(2);
    expect(stderr).toContain('pass --yes');
  });

  it('refuses to edit an invalid file, and names the fix', async () => {
    await writeFile(file, '{"apps":{},"apiKeys":[],"retentionDayz":3}');

    const { code, stderr } = await run([
      'hooks',
      'create',
      '--source',
      'generic',
      '--app',
      'ops',
      '--to',
      'a',
      '--file',
      file,
    ]);

    expect(code).toBe(1);
    expect(stderr).toContain('is not a valid gateway config (fix it first: wecom-gateway config check');
    expect(stderr).toContain('retentionDayz: unknown field `retentionDayz` (did you mean retentionDays?)');
  });
});

describe('hooks create and push-keys create --robot', () => {
  const ROBOT_KEY = '693a91f6-7b2c-4bc4-97a0-0ec2f1fa5aaa';
  beforeEach(async () => {
    await writeFile(file, JSON.stringify({ ...original, robots: { oncall: { key: ROBOT_KEY } } }, null, 2));
  });

  it('adds a hook and a push key that post to the robot’s group, with no recipients', async () => {
    const hook = await run([
      'hooks',
      'create',
      '--source',
      'grafana',
      '--robot',
      'oncall',
      '--file',
      file,
      '--json',
    ]);
    const push = await run([
      'push-keys',
      'create',
      '--robot',
      'oncall',
      '--name',
      'nightly',
      '--msgtype',
      'markdown_v2',
      '--file',
      file,
      '--json',
    ]);

    expect([hook.code, push.code]).toEqual([0, 0]);
    const text = await readFile(file, 'utf8');
    const raw = JSON.parse(text);
    expect(raw.hooks.grafana).toEqual({
      source: 'grafana',
      robot: 'oncall',
      tokenSha256: JSON.parse(hook.stdout).entry.tokenSha256,
    });
    expect(raw.pushKeys).toEqual([
      { name: 'nightly', sha256: expect.any(String), robot: 'oncall', msgtype: 'markdown_v2' },
    ]);
    const config = parseConfigJson(text);
    expect(createHookFinder(config.hooks ?? {})('grafana', tokenOf(JSON.parse(hook.stdout).url))?.robot).toBe(
      'oncall',
    );
    expect(createPushKeyMatcher(config.pushKeys ?? [])(tokenOf(JSON.parse(push.stdout).url))).toMatchObject({
      robot: 'oncall',
    });
  });

  it('refuses an app’s msgtype for a robot, naming the flag, and leaves the file alone', async () => {
    const before = await readFile(file, 'utf8');

    const { code, stderr } = await run([
      'push-keys',
      'create',
      '--robot',
      'oncall',
      '--msgtype',
      'textcard',
      '--file',
      file,
    ]);

    expect(code).not.toBe(0);
    expect(stderr).toContain('--msgtype');
    expect(stderr).toContain('textcard is for apps');
    expect(await readFile(file, 'utf8')).toBe(before);
  });
});

describe('push-keys create', () => {
  it('adds the push key with only its hash; the gateway finds it by the sendkey in the printed URL', async () => {
    const { code, stdout } = await run([
      'push-keys',
      'create',
      '--app',
      'ops',
      '--to',
      'admin',
      '--name',
      'backup',
      '--msgtype',
      'text',
      '--file',
      file,
      '--json',
    ]);

    expect(code).toBe(0);
    const { url } = JSON.parse(stdout);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:3000\/v1\/push\/[A-Za-z0-9_-]{32}$/);
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(tokenOf(url));
    const config = parseConfigJson(text);
    expect(createPushKeyMatcher(config.pushKeys ?? [])(tokenOf(url))).toMatchObject({
      name: 'backup',
      msgtype: 'text',
    });
    expect(JSON.parse(text).hooks).toEqual(original.hooks);
  });
});

describe('editing a stage (hooks create --stage)', () => {
  const cfn = mockClient(CloudFormationClient);
  const secrets = mockClient(SecretsManagerClient);

  it("adds to the stored config, pushes it through config push's diff and confirmation, and prints the stack's URL", async () => {
    cfn.reset();
    secrets.reset();
    cfn.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: 'wecom-gateway-prod',
          CreationTime: new Date(),
          StackStatus: 'UPDATE_COMPLETE',
          Outputs: [
            { OutputKey: 'ApiUrl', OutputValue: 'https://x.execute-api.eu-west-1.amazonaws.com/' },
            { OutputKey: 'ConfigSecretName', OutputValue: 'wecom-gateway/prod/config' },
          ],
        },
      ],
    });
    secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify(original) });
    secrets.on(PutSecretValueCommand).resolves({ VersionId: 'v2' });
    const plans: string[][] = [];

    const result = await editStageWith(
      { cfn: new CloudFormationClient({}), secrets: new SecretsManagerClient({}) },
      {
        stage: 'prod',
        edit: {
          apply: ({ raw }) => {
            raw.pushKeys = [{ name: 'cron', sha256: 'e'.repeat(64), app: 'ops', to: { touser: 'a' } }];
          },
          flagFor: () => undefined,
        },
        confirm: async (plan) => {
          plans.push(plan.diff.pushKeys.added);
          return true;
        },
      },
    );

    expect(result).toEqual({
      where: 'stage prod (wecom-gateway/prod/config)',
      apiUrl: 'https://x.execute-api.eu-west-1.amazonaws.com',
      stored: true,
    });
    expect(plans).toEqual([['cron']]);
    const written = JSON.parse(
      secrets.commandCalls(PutSecretValueCommand)[0]?.args[0].input.SecretString as string,
    );
    expect(written).toEqual({
      ...original,
      pushKeys: [{ name: 'cron', sha256: 'e'.repeat(64), app: 'ops', to: { touser: 'a' } }],
    });
  });
});

describe('keys create --file', () => {
  it('adds the key entry (only its SHA-256) to the file, keeping the rest, and prints the key once', async () => {
    const { code, stdout } = await run([
      'keys',
      'create',
      '--app',
      'ops',
      '--name',
      'deploy',
      '--file',
      file,
      '--json',
    ]);

    expect(code).toBe(0);
    const { key, entry } = JSON.parse(stdout);
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(key);
    expect(JSON.parse(text)).toEqual({ ...original, apiKeys: [...original.apiKeys, entry] });
    const config = parseConfigJson(text);
    expect(createAuthenticator(config.apiKeys)(`Bearer ${key}`)?.name).toBe('deploy');
  });

  it.each([
    [
      ['keys', 'create', '--app', 'opz', '--file', 'gateway.json'],
      '--app: opz not configured in gateway.json (apps: ops)',
    ],
    [
      ['keys', 'create', '--app', 'ops', '--name', 'ci', '--file', 'gateway.json'],
      '--name: gateway.json already has an API key "ci"',
    ],
    [['keys', 'create', '--app', 'ops', '--region', 'x'], '--region, --profile and --yes need --stage'],
  ])('%j is a usage error (exit 2) that leaves the file alone: %s', async (argv, message) => {
    const before = await readFile(file, 'utf8');

    const { code, stderr } = await run(argv, { cwd: dir });

    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(await readFile(file, 'utf8')).toBe(before);
  });
});
