import type { Command } from 'commander';
import { GatewayApi } from '../api.js';
import { action, type CliContext, type Run } from '../command.js';
import { resolveTarget } from '../target.js';
import { addTargetOptions } from './status.js';

interface CancelOpts {
  url?: string;
  key?: string;
}

async function cancel(run: Run, id: string, opts: CancelOpts): Promise<void> {
  const { out, ctx } = run;
  const api = new GatewayApi(await resolveTarget(opts, ctx.env, ctx.cwd));
  const canceled = await api.cancel(id);
  if (out.json) out.data(canceled);
  else out.line(`${canceled.id} ${out.c.cyan(canceled.status)}`);
}

export function registerCancel(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('cancel <id>')
    .description(
      'take back a message not yet sent (scheduled, queued or deferred): it is never delivered; a sent one is a 409, recall it instead',
    );
  addTargetOptions(cmd);
  cmd
    .addHelpText(
      'after',
      `
Examples:
  $ wecom-gateway send --app ops --to zhangsan --text "reminder" --at +2h    # prints msg_01J…
  $ wecom-gateway cancel msg_01J…`,
    )
    .action(action(ctx, cancel));
}
