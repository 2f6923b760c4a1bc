import { describe, expect, it } from 'vitest';
import { MissingEnvError, readEnv } from '#lib/config/index.js';

const completeEnv = (): NodeJS.ProcessEnv => ({
  TABLE_NAME: 'wecom-gateway',
  QUEUE_URL_HIGH: 'http://127.0.0.1:1/000000000000/high',
  QUEUE_URL_NORMAL: 'http://127.0.0.1:1/000000000000/normal',
  GATEWAY_CONFIG: '/tmp/gateway.json',
});

function missingVariable(env: NodeJS.ProcessEnv): string {
  try {
    readEnv(env);
  } catch (err) {
    if (err instanceof MissingEnvError) return err.variable;
    throw err;
  }
  throw new Error('readEnv accepted the environment');
}

describe('readEnv', () => {
  it.each(['TABLE_NAME', 'QUEUE_URL_HIGH', 'QUEUE_URL_NORMAL'])('names %s when it is missing', (name) => {
    const env = completeEnv();
    delete env[name];

    expect(missingVariable(env)).toBe(name);
  });

  it('treats an empty variable as missing', () => {
    const env = { ...completeEnv(), TABLE_NAME: '' };

    expect(missingVariable(env)).toBe('TABLE_NAME');
  });

  it('names both config sources when neither is set', () => {
    const env = completeEnv();
    delete env.GATEWAY_CONFIG;

    expect(missingVariable(env)).toBe('GATEWAY_CONFIG or CONFIG_SECRET_ID');
  });

  it('puts the variable name in the error message and a stable code on the error', () => {
    const env = completeEnv();
    delete env.TABLE_NAME;

    expect(() => readEnv(env)).toThrow(
      expect.objectContaining({ code: 'env_missing', message: expect.stringContaining('TABLE_NAME') }),
    );
  });

  it('defaults WECOM_API_BASE to https://qyapi.weixin.qq.com', () => {
    const env = completeEnv();

    expect(readEnv(env).wecomApiBase).toBe('https://qyapi.weixin.qq.com');
  });

  it('strips trailing slashes from WECOM_API_BASE', () => {
    const env = { ...completeEnv(), WECOM_API_BASE: 'http://127.0.0.1:9000/sim//' };

    expect(readEnv(env).wecomApiBase).toBe('http://127.0.0.1:9000/sim');
  });

  it('reads every value it was given', () => {
    const env = {
      ...completeEnv(),
      CONFIG_SECRET_ID: 'gw-config',
      LOG_LEVEL: 'debug',
      GATEWAY_STAGE: 'prod',
      AWS_REGION: 'ap-east-1',
    };

    expect(readEnv(env)).toEqual({
      tableName: 'wecom-gateway',
      queueUrls: {
        high: 'http://127.0.0.1:1/000000000000/high',
        normal: 'http://127.0.0.1:1/000000000000/normal',
      },
      wecomApiBase: 'https://qyapi.weixin.qq.com',
      configFile: '/tmp/gateway.json',
      configSecretId: 'gw-config',
      logLevel: 'debug',
      stage: 'prod',
      region: 'ap-east-1',
    });
  });
});
