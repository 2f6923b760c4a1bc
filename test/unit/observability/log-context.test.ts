import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { appendLogContext, createLogger, runWithLogContext } from '#lib/observability/index.js';

function capture() {
  const lines: string[] = [];
  const logger = createLogger({ service: 'ingest' }, { write: (l) => lines.push(l) });
  return { logger, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('log context', () => {
  it('puts the invocation keys on every line written inside it, after awaits too', async () => {
    const { logger, parsed } = capture();

    await runWithLogContext({ requestId: 'r-1', coldStart: true }, async () => {
      logger.info('before');
      await sleep(1);
      logger.child({ messageId: 'm-1' }).warn('after');
    });
    logger.info('outside');

    expect(parsed()).toMatchObject([
      { service: 'ingest', requestId: 'r-1', coldStart: true, message: 'before' },
      { requestId: 'r-1', messageId: 'm-1', message: 'after' },
      { message: 'outside' },
    ]);
    expect(parsed()[2]).not.toHaveProperty('requestId');
  });

  it('keeps concurrent invocations apart (one local ingest container serves many requests)', async () => {
    const { logger, parsed } = capture();
    const invoke = (id: string, delayMs: number) =>
      runWithLogContext({ requestId: id }, async () => {
        await sleep(delayMs);
        logger.info(`done ${id}`);
      });

    await Promise.all([invoke('slow', 20), invoke('fast', 1)]);

    for (const line of parsed()) expect(line.message).toBe(`done ${line.requestId}`);
  });

  it('adds keys learnt during the invocation', async () => {
    const { logger, parsed } = capture();

    await runWithLogContext({ requestId: 'r-2' }, async () => {
      appendLogContext({ messageId: 'm-2' });
      logger.info('queued');
    });

    expect(parsed()[0]).toMatchObject({ requestId: 'r-2', messageId: 'm-2' });
  });
});
