import { describe, expect, it } from 'vitest';
import { CONFIG_MAX_AGE_MS, ConfigError, ConfigSource, parseConfig } from '#lib/config/index.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

/** A config store double: returns whatever `stored` holds (or throws it), counting reads. */
function store(initial: unknown) {
  const s = {
    stored: JSON.stringify(initial) as string | Error,
    reads: 0,
    read: async () => {
      s.reads++;
      if (s.stored instanceof Error) throw s.stored;
      return { text: s.stored, source: 'secret gw/config' };
    },
  };
  return s;
}

function setup(maxAgeMs = CONFIG_MAX_AGE_MS) {
  const clock = { now: 1_000_000 };
  const db = store(minimalConfig());
  const errors: unknown[] = [];
  const changes: string[] = [];
  const opts = {
    maxAgeMs,
    now: () => clock.now,
    onError: (err: unknown) => errors.push(err),
    onChange: (source: string) => changes.push(source),
  };
  return { clock, db, errors, changes, load: () => ConfigSource.load(db.read, opts) };
}

const withKey = (name: string) => ({
  ...minimalConfig(),
  apiKeys: [{ name, sha256: 'b'.repeat(64), apps: ['ops'] }],
});

describe('ConfigSource', () => {
  it('does not read the store again while the config is younger than the max age', async () => {
    const { clock, db, load } = setup();
    const source = await load();
    clock.now += CONFIG_MAX_AGE_MS - 1;

    await source.refresh();

    expect(db.reads).toBe(1);
  });

  it('puts a changed config in force on the first refresh past the max age', async () => {
    const { clock, db, changes, load } = setup();
    const source = await load();
    db.stored = JSON.stringify(withKey('rotated'));
    clock.now += CONFIG_MAX_AGE_MS;

    await source.refresh();

    expect(source.current.apiKeys.map((k) => k.name)).toEqual(['rotated']);
    expect(changes).toEqual(['secret gw/config']);
  });

  it('keeps the last good config and reports the error when the new document is invalid', async () => {
    const { clock, db, errors, load } = setup();
    const source = await load();
    const before = source.current;
    db.stored = JSON.stringify({ apps: { ops: { corpId: 'ww1' } }, apiKeys: [] });
    clock.now += CONFIG_MAX_AGE_MS;

    await expect(source.refresh()).resolves.toBe(before);

    expect(source.current).toBe(before);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ConfigError);
    expect((errors[0] as ConfigError).message).toMatch(/apps\.ops\.agentId/);
  });

  it('keeps the last good config when the store cannot be read, and asks again only after the max age', async () => {
    const { clock, db, errors, load } = setup();
    const source = await load();
    db.stored = new Error('Secrets Manager unavailable');
    clock.now += CONFIG_MAX_AGE_MS;

    await source.refresh();
    await source.refresh();
    expect(db.reads).toBe(2);
    expect(errors).toHaveLength(1);
    expect(source.current.apps.ops?.agentId).toBe(1000002);

    db.stored = JSON.stringify(withKey('back'));
    clock.now += CONFIG_MAX_AGE_MS;
    await source.refresh();
    expect(source.current.apiKeys[0]?.name).toBe('back');
  });

  it('reports an invalid document again on every check until it is fixed (the alarm stays up)', async () => {
    const { clock, db, errors, load } = setup();
    const source = await load();
    db.stored = '{ not json';
    for (let i = 0; i < 3; i++) {
      clock.now += CONFIG_MAX_AGE_MS;
      await source.refresh();
    }
    expect(errors).toHaveLength(3);
  });

  it('keeps the same object when the document did not change, so what was derived from it is reused', async () => {
    const { clock, changes, load } = setup();
    const source = await load();
    const before = source.current;
    clock.now += CONFIG_MAX_AGE_MS;

    await source.refresh();

    expect(source.current).toBe(before);
    expect(changes).toEqual([]);
  });

  it('shares one read between concurrent invocations', async () => {
    const { clock, db, load } = setup();
    const source = await load();
    clock.now += CONFIG_MAX_AGE_MS;

    await Promise.all([source.refresh(), source.refresh(), source.refresh()]);

    expect(db.reads).toBe(2);
  });

  it('fails the cold start with the reason when there is no good config yet', async () => {
    const { db, load } = setup();
    db.stored = JSON.stringify({ apps: {} });

    await expect(load()).rejects.toThrow(/apiKeys/);
  });

  it('never reads anything for a fixed config', async () => {
    const config = parseConfig(minimalConfig());
    const source = ConfigSource.fixed(config);

    await expect(source.refresh()).resolves.toBe(config);
  });
});
