import { describe, expect, it } from 'vitest';
import { createLogger, REDACTED } from '#lib/observability/index.js';

/** A logger whose output lands in an array of lines. */
function capture(level?: string) {
  const lines: string[] = [];
  const logger = createLogger(
    { service: 'sender' },
    { ...(level ? { level } : {}), write: (line) => lines.push(line) },
  );
  return { lines, logger, entries: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('createLogger', () => {
  it('writes one JSON object per line with level, time, the base keys, the message and the context', () => {
    const { logger, lines, entries } = capture();

    logger.info('sent', { messageId: 'msg_1', msgid: 'wx1' });

    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('\n');
    expect(entries()[0]).toEqual({
      level: 'info',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      service: 'sender',
      message: 'sent',
      messageId: 'msg_1',
      msgid: 'wx1',
    });
  });

  it('defaults to info: debug lines are dropped', () => {
    const { logger, entries } = capture();

    logger.debug('noise');
    logger.info('kept');

    expect(entries().map((e) => e.message)).toEqual(['kept']);
  });

  it('writes only lines at or above the configured level', () => {
    const { logger, entries } = capture('warn');

    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');

    expect(entries().map((e) => e.level)).toEqual(['warn', 'error']);
  });

  it('writes nothing at level silent', () => {
    const { logger, lines } = capture('silent');

    logger.error('boom');

    expect(lines).toEqual([]);
  });

  it('falls back to info for an unknown level', () => {
    const { logger, entries } = capture('verbose');

    logger.debug('d');
    logger.info('i');

    expect(entries().map((e) => e.message)).toEqual(['i']);
  });

  it('adds the child keys and keeps the level of its parent', () => {
    const { logger, entries } = capture('warn');
    const child = logger.child({ requestId: 'req-1' });

    child.info('dropped');
    child.warn('kept');

    expect(entries()).toEqual([
      expect.objectContaining({ service: 'sender', requestId: 'req-1', message: 'kept' }),
    ]);
  });

  it('never writes a secret handed to it in the context', () => {
    const { logger, lines } = capture();

    logger.error('send failed', {
      secret: 'S3CR3T',
      err: new Error('POST /cgi-bin/message/send?access_token=T0K3N failed'),
    });

    expect(lines[0]).not.toContain('S3CR3T');
    expect(lines[0]).not.toContain('T0K3N');
    expect(lines[0]).toContain(REDACTED);
  });

  it('serializes an error in the context with its name, message and code', () => {
    const { logger, entries } = capture();
    const err = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

    logger.error('send failed', { err });

    expect(entries()[0]?.err).toMatchObject({
      name: 'Error',
      message: 'connect ECONNREFUSED',
      code: 'ECONNREFUSED',
    });
  });
});
