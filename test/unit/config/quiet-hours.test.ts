import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '#lib/config/index.js';
import { thrown } from '#test/helpers/thrown.js';

const withApp = (extra: Record<string, unknown>) => ({
  apps: { ops: { corpId: 'ww1', agentId: 1000002, secret: 's', ...extra } },
  apiKeys: [],
});

describe('apps.<name>.quietHours and schedule', () => {
  it('takes one rule or a list, with the spread defaulting to 180 s', () => {
    const one = parseConfig(
      withApp({ quietHours: { timeZone: 'Asia/Shanghai', start: '22:00', end: '08:00' } }),
    );
    expect(one.apps.ops?.quietHours).toEqual({ timeZone: 'Asia/Shanghai', start: '22:00', end: '08:00' });
    const list = parseConfig(
      withApp({
        quietHours: [
          { timeZone: 'Asia/Shanghai', start: '22:00', end: '08:00' },
          {
            timeZone: 'Europe/Berlin',
            start: '20:00',
            end: '09:00',
            days: ['sat', 'sun'],
            recipients: { touser: ['mum'] },
          },
        ],
        schedule: {},
      }),
    );
    expect(list.apps.ops?.schedule).toEqual({ spreadSeconds: 180 });
  });

  it.each([
    [
      { quietHours: { timeZone: 'China/Beijing', start: '22:00', end: '08:00' } },
      'apps.ops.quietHours.timeZone',
      'IANA time zone',
    ],
    [{ quietHours: { timeZone: 'UTC', start: '24:00', end: '08:00' } }, 'apps.ops.quietHours.start', 'HH:MM'],
    [
      { quietHours: [{ timeZone: 'UTC', start: '22:00', end: '8:00' }] },
      'apps.ops.quietHours.0.end',
      'HH:MM',
    ],
    [
      { quietHours: { timeZone: 'UTC', start: '22:00', end: '08:00', days: ['monday'] } },
      'apps.ops.quietHours.days.0',
      'sun, mon',
    ],
    [
      { quietHours: { timeZone: 'UTC', start: '22:00', end: '08:00', priorities: ['urgent'] } },
      'apps.ops.quietHours.priorities.0',
      'high or normal',
    ],
    [{ schedule: { spreadSeconds: 7200 } }, 'apps.ops.schedule.spreadSeconds', '<= 3600'],
    [
      { quietHours: { timeZone: 'UTC', start: '00:00', end: '00:00' } },
      'apps.ops.quietHours.end',
      'for ever',
    ],
  ])('refuses %j naming %s', (extra, field, words) => {
    const err = thrown(() => parseConfig(withApp(extra)), ConfigError);
    const issue = err.issues.find((i) => i.field === field);
    expect(issue?.message, err.message).toContain(words);
  });
});
