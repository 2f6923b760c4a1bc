import { currentLogContext } from './log-context.js';
import { redact } from './redact.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(message: string, context?: Record<string, unknown>): void;
  info(message: string, context?: Record<string, unknown>): void;
  warn(message: string, context?: Record<string, unknown>): void;
  error(message: string, context?: Record<string, unknown>): void;
  /** A logger whose lines carry these keys too (e.g. the Lambda request id). */
  child(keys: Record<string, unknown>): Logger;
}

/**
 * JSON-lines logger (one object per line, as CloudWatch Logs Insights likes it). Every context value passes
 * through {@link redact}, so a token or secret handed to the logger by mistake is still never written. Lines
 * written during an invocation also carry its keys (request ids, cold start; see log-context.ts).
 *
 * @example const log = createLogger({ service: 'sender' }); log.info('sent', { messageId, msgid });
 */
export function createLogger(
  base: Record<string, unknown>,
  opts: { level?: string; write?: (line: string) => void } = {},
): Logger {
  const level = (opts.level && opts.level in ORDER ? opts.level : 'info') as LogLevel;
  const write = opts.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const emit = (lvl: LogLevel, message: string, context?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const entry = {
      ...base,
      ...currentLogContext(),
      ...(context ?? {}),
      level: lvl,
      time: new Date().toISOString(),
      message,
    };
    write(JSON.stringify(redact(entry)));
  };
  return {
    debug: (m, c) => emit('debug', m, c),
    info: (m, c) => emit('info', m, c),
    warn: (m, c) => emit('warn', m, c),
    error: (m, c) => emit('error', m, c),
    child: (keys) => createLogger({ ...base, ...keys }, { level, write }),
  };
}
