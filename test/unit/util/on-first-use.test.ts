import { describe, expect, it } from 'vitest';
import { OnFirstUse } from '#lib/util/index.js';

describe('OnFirstUse', () => {
  it('builds nothing until asked, then once for all callers, even concurrent ones', async () => {
    let builds = 0;
    const value = new OnFirstUse(async () => ({ n: ++builds }));
    expect(builds).toBe(0);
    await expect(value.settled()).resolves.toBeUndefined();

    const [a, b] = await Promise.all([value.get(), value.get()]);
    const c = await value.get();

    expect(builds).toBe(1);
    expect(a).toBe(b);
    expect(c).toBe(a);
    await expect(value.settled()).resolves.toBe(a);
  });

  it('tries again after a failed build instead of keeping the failure', async () => {
    let attempts = 0;
    const value = new OnFirstUse(async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('emulator not up yet');
      return 'ready';
    });

    await expect(value.get()).rejects.toThrow('emulator not up yet');
    await expect(value.settled()).resolves.toBeUndefined();
    await expect(value.get()).resolves.toBe('ready');
    expect(attempts).toBe(2);
  });

  it('hands a build still under way to settled(), so what it opens can be closed', async () => {
    let finish: (v: string) => void = () => undefined;
    const value = new OnFirstUse(() => new Promise<string>((r) => (finish = r)));
    const first = value.get();
    const settled = value.settled();
    finish('client');
    await expect(settled).resolves.toBe('client');
    await expect(first).resolves.toBe('client');
  });
});
