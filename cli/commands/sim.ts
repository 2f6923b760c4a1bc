import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { action, type CliContext, type Run } from '../command.js';
import { ConfigError, parseConfigJson } from '../domain.js';
import { CliError, UsageError } from '../errors.js';

interface SimApp {
  corpId: string;
  agentId: number;
  secret: string;
}

interface SimOpts {
  port: number;
  latency: number;
  app?: SimApp[];
  config?: string;
  tokenTtl?: number;
  seats?: number;
}

const DEFAULT_PORT = 3001;

const integer =
  (min: number, max = Number.MAX_SAFE_INTEGER) =>
  (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`Expected an integer ${min}-${max}.`);
    return n;
  };

/** `--app corpId:agentId:secret`, repeatable. The secret may itself contain colons. */
const appSpec = (value: string, previous: SimApp[] = []): SimApp[] => {
  const [corpId, agent, ...rest] = value.split(':');
  const secret = rest.join(':');
  const agentId = Number(agent);
  if (!corpId || !secret || !Number.isInteger(agentId) || agentId < 1) {
    throw new InvalidArgumentError('Expected corpId:agentId:secret, e.g. ww0123456789:1000002:mysecret.');
  }
  return [...previous, { corpId, agentId, secret }];
};

async function appsFrom(ctx: CliContext, opts: SimOpts): Promise<{ apps: SimApp[]; generated: boolean }> {
  if (opts.app && opts.config) throw new UsageError('give --app or --config, not both');
  if (opts.app) return { apps: opts.app, generated: false };
  if (opts.config) {
    let text: string;
    try {
      text = await readFile(resolve(ctx.cwd, opts.config), 'utf8');
    } catch (err) {
      throw new CliError(
        'file_unreadable',
        `cannot read ${opts.config}: ${(err as NodeJS.ErrnoException).code ?? err}`,
      );
    }
    try {
      const config = parseConfigJson(text, opts.config);
      return {
        apps: Object.values(config.apps).map((a) => ({
          corpId: a.corpId,
          agentId: a.agentId,
          secret: a.secret,
        })),
        generated: false,
      };
    } catch (err) {
      if (err instanceof ConfigError) throw new CliError('config_invalid', err.message);
      throw err;
    }
  }
  // A demo app whose credentials are printed, for integrations that only need something to talk to.
  return {
    apps: [{ corpId: 'wwsim0000000000001', agentId: 1000002, secret: randomBytes(18).toString('base64url') }],
    generated: true,
  };
}

async function sim({ out, ctx }: Run, opts: SimOpts): Promise<void> {
  const { apps, generated } = await appsFrom(ctx, opts);
  // Loaded only here: the simulator is not part of any other command.
  const { startWecomSimulator } = await import('#local/wecom-sim/index.js');
  let simulator: Awaited<ReturnType<typeof startWecomSimulator>>;
  try {
    simulator = await startWecomSimulator({
      port: opts.port,
      latencyMs: opts.latency,
      apps,
      ...(opts.tokenTtl !== undefined ? { tokenTtlSeconds: opts.tokenTtl } : {}),
      ...(opts.seats !== undefined ? { seats: opts.seats } : {}),
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new CliError(
        'port_in_use',
        `port ${opts.port} is in use (is \`npm start\` running?): pass --port`,
      );
    }
    throw err;
  }
  const url = simulator.url;
  const info = {
    url,
    latencyMs: opts.latency,
    apps: apps.map((a) => ({ corpid: a.corpId, agentid: a.agentId, corpsecret: a.secret })),
    api: ['GET /cgi-bin/gettoken', 'POST /cgi-bin/message/send', 'POST /cgi-bin/message/recall'],
    inspect: ['/__sim/stats', '/__sim/inbox/<userid>', '/__sim/drops', '/__sim/requests'].map(
      (p) => `${url}${p}`,
    ),
    control: ['/__sim/faults', '/__sim/latency', '/__sim/reset', '/__sim/invalidate-tokens'].map(
      (p) => `POST ${url}${p}`,
    ),
  };
  out.data(info);
  const { c } = out;
  out.line(`${c.bold('WeCom simulator')}  ${c.green(url)}   (latency ${opts.latency} ms)`);
  out.line(c.dim('  use it instead of https://qyapi.weixin.qq.com (e.g. WECOM_API_BASE for wecom-gateway)'));
  out.line(
    `  ${generated ? 'demo app' : 'apps    '}  ${info.apps.map((a) => `corpid ${a.corpid} agentid ${a.agentid} corpsecret ${a.corpsecret}`).join('\n            ')}`,
  );
  out.line(`  API       ${info.api.join(', ')}`);
  out.line(`  inspect   ${info.inspect.join('  ')}`);
  out.line(`  control   ${info.control.map((s) => s.replace(`POST ${url}`, '')).join('  ')} (POST)`);
  out.note(c.dim('Ctrl-C to stop'));

  await new Promise<void>((done) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      out.note(`${signal}: stopping the simulator`);
      done();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await simulator.stop();
}

export function registerSim(program: Command, ctx: CliContext): void {
  program
    .command('sim')
    .description(
      'run only the WeCom simulator (gettoken, message/send, recall) for testing your own WeCom integration',
    )
    .option('-p, --port <port>', 'port on 127.0.0.1 (0 = any free port)', integer(0, 65535), DEFAULT_PORT)
    .option('--latency <ms>', 'delay added to every WeCom API answer', integer(0, 60_000), 20)
    .option(
      '--app <corpId:agentId:secret>',
      'an app WeCom knows; repeat for more (default: a demo app, printed)',
      appSpec,
    )
    .option('--config <file>', 'take the apps from a gateway config file instead')
    .option('--token-ttl <seconds>', 'lifetime of access tokens (WeCom: 7200)', integer(1))
    .option(
      '--seats <n>',
      'licensed seats; WeCom allows seats × 200 person-times per app per day',
      integer(1),
    )
    .addHelpText(
      'after',
      `
It enforces WeCom's validation and limits (silent per-member drops included) and records what each member received.
Examples:
  $ wecom-gateway sim --port 3001 --latency 50 --app ww0123456789:1000002:mysecret
  $ curl -s -XPOST http://127.0.0.1:3001/__sim/faults -d '{"script":{"kinds":[{"errcode":45009}]}}'`,
    )
    .action(action(ctx, sim));
}
