import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, ROBOT_QUOTA_DEFAULTS, robotKeyOf } from '#lib/config/index.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

const KEY = '693a91f6-7b2c-4bc4-97a0-0ec2f1fa5aaa';

function withRobot(robot: Record<string, unknown>, keyRobots: string[] = ['oncall']) {
  const input = minimalConfig() as ReturnType<typeof minimalConfig> & Record<string, unknown>;
  input.robots = { oncall: robot };
  (input.apiKeys[0] as Record<string, unknown>).robots = keyRobots;
  return input;
}

function configError(input: unknown): ConfigError {
  try {
    parseConfig(input);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('parseConfig accepted the input');
}

describe('robots config', () => {
  it('reads a robot with only a key and fills its quota defaults', () => {
    const config = parseConfig(withRobot({ key: KEY }));

    expect(config.robots?.oncall).toMatchObject({ key: KEY, quota: ROBOT_QUOTA_DEFAULTS });
    expect(config.apiKeys[0]?.robots).toEqual(['oncall']);
  });

  it('reads a pasted webhook URL down to its key', () => {
    const url = `https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=${KEY}`;

    const config = parseConfig(withRobot({ key: ` ${url} ` }));

    expect(config.robots?.oncall?.key).toBe(KEY);
    expect(robotKeyOf(url)).toBe(KEY);
  });

  it('refuses a URL that is not a robot webhook, without echoing what was pasted', () => {
    const pasted = `https://example.com/hook?token=${KEY}`;

    const err = configError(withRobot({ key: pasted }));

    expect(err.issues.map((i) => i.field)).toEqual(['robots.oncall.key']);
    expect(err.message).not.toContain(KEY);
  });

  it('refuses a perMinute above WeCom’s 20 a minute', () => {
    const err = configError(withRobot({ key: KEY, quota: { perMinute: 21 } }));

    expect(err.issues).toEqual([
      {
        field: 'robots.oncall.quota.perMinute',
        message: 'WeCom allows a robot at most 20 messages a minute',
      },
    ]);
  });

  it('names apiKeys when a key lists a robot that is not configured', () => {
    const err = configError(withRobot({ key: KEY }, ['pager']));

    expect(err.issues.map((i) => i.message)).toEqual([
      'every robot listed by an API key must be configured under robots',
    ]);
  });

  it('accepts a key for robots only, and refuses a key for nothing', () => {
    const robotsOnly = withRobot({ key: KEY });
    robotsOnly.apiKeys[0] = { ...robotsOnly.apiKeys[0], apps: [] } as never;
    const nothing = minimalConfig();
    nothing.apiKeys[0] = { ...nothing.apiKeys[0], apps: [] } as never;

    expect(parseConfig(robotsOnly).apiKeys[0]?.apps).toEqual([]);
    expect(configError(nothing).issues.map((i) => i.message)).toEqual([
      'every API key must list at least one app (apps) or robot (robots)',
    ]);
  });
});
