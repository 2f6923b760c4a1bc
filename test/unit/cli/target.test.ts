import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '#cli/errors.js';
import { resolveTarget } from '#cli/target.js';

describe('resolveTarget', () => {
  let cwd: string;
  const local = (file: string, text: string) => writeFile(join(cwd, '.local', file), text);

  beforeEach(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'cli-target-'));
    await mkdir(join(cwd, '.local'));
  });
  afterEach(() => rm(cwd, { recursive: true, force: true }));

  it('prefers --url/--key, then WECOM_GATEWAY_URL/KEY', async () => {
    const env = { WECOM_GATEWAY_URL: 'https://gw.example.com/', WECOM_GATEWAY_KEY: 'wgw_fromenv' };

    expect(await resolveTarget({ url: 'http://10.1.1.1:8080', key: 'wgw_flag' }, env, cwd)).toEqual({
      url: 'http://10.1.1.1:8080',
      key: 'wgw_flag',
      urlSource: 'flag',
    });
    expect(await resolveTarget({}, env, cwd)).toEqual({
      url: 'https://gw.example.com',
      key: 'wgw_fromenv',
      urlSource: 'env',
    });
  });

  it("uses a live `npm start`'s stack.json and dev key, and ignores a stack.json whose process is gone", async () => {
    await local('dev-api-key', 'wgw_dev_abc\n');
    await local('stack.json', JSON.stringify({ apiUrl: 'http://127.0.0.1:45678', pid: process.pid }));
    expect(await resolveTarget({}, {}, cwd)).toEqual({
      url: 'http://127.0.0.1:45678',
      key: 'wgw_dev_abc',
      urlSource: 'local stack',
    });

    // PIDs above the kernel's pid_max (at most 2^22) never belong to a running process.
    await local('stack.json', JSON.stringify({ apiUrl: 'http://127.0.0.1:45678', pid: 2 ** 22 + 1 }));
    expect(await resolveTarget({}, {}, cwd)).toMatchObject({
      url: 'http://127.0.0.1:3000',
      urlSource: 'default',
    });
  });

  it('never sends the dev key to a gateway that is not on loopback', async () => {
    await local('dev-api-key', 'wgw_dev_abc\n');

    await expect(resolveTarget({ url: 'https://gw.example.com' }, {}, cwd)).rejects.toThrow(UsageError);
    expect(await resolveTarget({ url: 'http://localhost:3000' }, {}, cwd)).toMatchObject({
      key: 'wgw_dev_abc',
    });
  });
});
