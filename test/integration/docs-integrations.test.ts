/**
 * Each page of docs/integrations/, followed as a reader follows it against `npm start`: its `hooks create` or
 * `push-keys create` command edits a fresh dev config, its "try it" curl block runs against one local stack, and
 * what the simulated member received must be the page's "what it looks like" block.
 *
 * A page marks its blocks with a comment on the line before the fence:
 * - `<!-- create -->` before the ```sh block holding the one `npx wecom-gateway … create …` command;
 * - `<!-- config: <json path> = <value> -->` (optional, repeatable): a hand edit the page asks for, e.g. Sentry's
 *   client secret, with `$SECRET` standing for the secret the test picks;
 * - `<!-- try-it -->` before the ```sh block to paste, which reads `$HOOK_URL` (or `$PUSH_URL`) and `$SECRET`;
 * - `<!-- received: <msgtype> -->` before the block showing the message: its content verbatim, or for a card its
 *   JSON.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devConfig, newDevKey } from '#local/dev-config.js';
import { type LocalStack, startLocalStack } from '#local/stack.js';
import { runInProcess } from '#test/helpers/cli-inprocess.js';
import { waitFor } from '#test/helpers/gateway.js';

const DOCS = join(import.meta.dirname, '..', '..', 'docs', 'integrations');
const run = promisify(execFile);

const tools = ['curl', 'openssl'].filter((t) => spawnSync(t, ['--version']).error !== undefined);
if (tools.length)
  process.stderr.write(`docs integrations test: ${tools.join(', ')} not installed, skipped\n`);

interface Page {
  file: string;
  /** The create command's arguments after `npx wecom-gateway`. */
  create: string[];
  edits: { path: string[]; value: string }[];
  tryIt: string;
  msgtype: string;
  received: string;
}

/** The body of the fenced block that opens on the line after the marker at line index `at`. */
function blockAfter(lines: string[], at: number): string {
  if (!/^```\w*$/.test(lines[at + 1] ?? '')) throw new Error(`line ${at + 2}: a marker must precede a fence`);
  const end = lines.indexOf('```', at + 2);
  return lines.slice(at + 2, end).join('\n');
}

async function readPage(file: string): Promise<Page> {
  const lines = (await readFile(join(DOCS, file), 'utf8')).split('\n');
  const find = (re: RegExp) => {
    const at = lines.findIndex((l) => re.test(l));
    if (at < 0) throw new Error(`docs/integrations/${file} has no ${re.source} marker`);
    return at;
  };
  const createAt = find(/^<!-- create -->$/);
  const command = blockAfter(lines, createAt)
    .split('\n')
    .find((l) => l.startsWith('npx wecom-gateway '));
  if (!command) throw new Error(`docs/integrations/${file}: the create block has no npx wecom-gateway line`);
  const receivedAt = find(/^<!-- received: \w+ -->$/);
  return {
    file,
    create: command
      .replace(/\s+#.*$/, '')
      .trim()
      .split(/\s+/)
      .slice(2),
    edits: lines.flatMap((l) => {
      const m = /^<!-- config: ([\w.]+) = (.+) -->$/.exec(l);
      return m ? [{ path: (m[1] as string).split('.'), value: m[2] as string }] : [];
    }),
    tryIt: blockAfter(lines, find(/^<!-- try-it -->$/)),
    msgtype: /^<!-- received: (\w+) -->$/.exec(lines[receivedAt] as string)?.[1] as string,
    received: blockAfter(lines, receivedAt),
  };
}

/** The userid the create command sends to (its `--to`). */
const recipientOf = (page: Page) => page.create[page.create.indexOf('--to') + 1] as string;

const SECRET = 'docs-sample-secret';

const files = (await readdir(DOCS)).filter((f) => f.endsWith('.md') && f !== 'index.md').sort();

describe.skipIf(tools.length > 0)('docs/integrations pages, tried against the local stack', () => {
  let dir: string;
  let stack: LocalStack;
  let pages: Page[];
  /** Per page: the URL (with npm start's address) and the secret its create command printed. */
  const urls = new Map<string, { url: string; secret?: string }>();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wgw-docs-integrations-'));
    const configFile = join(dir, 'gateway.json');
    // The config `npm start` generates on a first run, which the pages' commands then edit.
    await writeFile(configFile, JSON.stringify(devConfig(newDevKey()), null, 2));
    pages = await Promise.all(files.map(readPage));
    for (const page of pages) {
      const res = await runInProcess([...page.create, '--file', configFile, '--json'], { cwd: dir });
      if (res.code !== 0)
        throw new Error(`${page.file}: wecom-gateway ${page.create.join(' ')}\n${res.stderr}`);
      const out = JSON.parse(res.stdout) as { url: string; secret?: string };
      urls.set(page.file, out);
    }
    const config = JSON.parse(await readFile(configFile, 'utf8'));
    for (const { path, value } of pages.flatMap((p) => p.edits)) {
      const parent = path.slice(0, -1).reduce((o, k) => o[k], config);
      parent[path.at(-1) as string] = value.replaceAll('$SECRET', SECRET);
    }
    await writeFile(configFile, JSON.stringify(config, null, 2));
    stack = await startLocalStack({ port: 0, simulatorPort: 0, configFile, simulator: { latencyMs: 5 } });
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('has a page per source and one for one-URL push', () => {
    expect(files).toEqual([
      'alertmanager.md',
      'generic.md',
      'github.md',
      'gitlab.md',
      'grafana.md',
      'push.md',
      'sentry.md',
    ]);
  });

  it.each(files)('%s: the sample is accepted and the member receives what the page shows', async (file) => {
    const page = pages.find((p) => p.file === file) as Page;
    const printed = urls.get(file) as { url: string; secret?: string };
    const url = `${stack.apiUrl}${new URL(printed.url).pathname}`;
    const user = recipientOf(page);
    const inbox = () => stack.simulator?.inbox(user) ?? [];
    const before = inbox().length;

    const { stdout } = await run('bash', ['-e', '-o', 'pipefail', '-c', page.tryIt], {
      env: { PATH: process.env.PATH, HOOK_URL: url, PUSH_URL: url, SECRET: printed.secret ?? SECRET },
      timeout: 15_000,
    });

    const answer = JSON.parse(stdout);
    expect(answer, stdout).toMatchObject({ status: 'queued' });
    await waitFor(
      () => inbox().length > before,
      20_000,
      () => `${user} received nothing from ${file}'s sample (answer: ${stdout})`,
    );
    const received = inbox().at(-1);
    expect(received?.msgtype).toBe(page.msgtype);
    const payload = received?.payload as { content?: unknown };
    if (typeof payload.content === 'string') expect(payload.content).toBe(page.received);
    else expect(payload).toEqual(JSON.parse(page.received));
  });
});
