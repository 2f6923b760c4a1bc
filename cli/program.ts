import { Command } from 'commander';
import pkg from '../package.json' with { type: 'json' };
import type { CliContext } from './command.js';
import { registerApps } from './commands/apps.js';
import { registerCancel } from './commands/cancel.js';
import { registerConfig } from './commands/config.js';
import { registerDlq } from './commands/dlq.js';
import { registerDoctor } from './commands/doctor.js';
import { registerHooks, registerPushKeys } from './commands/hooks.js';
import { registerKeys } from './commands/keys.js';
import { registerMessages } from './commands/messages.js';
import { registerSend } from './commands/send.js';
import { registerSim } from './commands/sim.js';
import { registerStatus } from './commands/status.js';
import { wantsColor } from './output.js';

/**
 * The `wecom-gateway` command tree. Settings made here before `.command()` (output streams, exitOverride, help
 * hints) are inherited by every subcommand, so each one has `--help`, the global flags and the same errors.
 */
export function buildProgram(ctx: CliContext, argv: readonly string[] = []): Command {
  const program = new Command('wecom-gateway')
    .description(
      'Operate wecom-gateway: API keys, config, hooks and push keys, health checks, test sends, message status and lists, app health, dead messages, the WeCom simulator.',
    )
    .version(pkg.version, '-V, --version')
    .option('--json', 'machine-readable output: exactly one JSON document on stdout')
    .option('--no-color', 'no colours (also NO_COLOR=1; off anyway when output is not a terminal)')
    .option('--debug', 'show stack traces of unexpected errors')
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      writeOut: (s) => void ctx.stdout.write(s),
      writeErr: (s) => void ctx.stderr.write(s),
      outputError: (s, write) => {
        const red = wantsColor(ctx.stderr, ctx.env, !argv.includes('--no-color'));
        write(red ? `\x1b[31m${s}\x1b[39m` : s);
      },
    })
    .addHelpText(
      'after',
      `
Exit codes: 0 ok, 1 failure, 2 usage error.
Environment: WECOM_GATEWAY_URL, WECOM_GATEWAY_KEY (API commands); AWS_PROFILE, AWS_REGION (--stage); NO_COLOR.`,
    );
  registerKeys(program, ctx);
  registerConfig(program, ctx);
  // Config edits and checks that replace hand-editing (issue 21).
  registerHooks(program, ctx);
  registerPushKeys(program, ctx);
  registerDoctor(program, ctx);
  registerSend(program, ctx);
  registerStatus(program, ctx);
  registerCancel(program, ctx);
  registerMessages(program, ctx);
  registerApps(program, ctx);
  registerDlq(program, ctx);
  registerSim(program, ctx);
  return program;
}
