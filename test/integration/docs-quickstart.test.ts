import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '#test/helpers/gateway.js';

const REPO = join(import.meta.dirname, '..', '..');
const PAGE = join(REPO, 'docs', 'getting-started', 'local.md');

const hasCurl = spawnSync('curl', ['--version']).status === 0;
if (!hasCurl) process.stderr.write('docs quick start test: curl is not installed, skipped\n');

/** The page's first `sh` block after `marker`: what a newcomer pastes into a second terminal. */
async function firstMessageBlock(file = PAGE, marker = 'Send a message'): Promise<string> {
  const page = await readFile(file, 'utf8');
  const from = page.indexOf(marker);
  const block = /```sh\n([\s\S]*?)```/.exec(page.slice(from))?.[1];
  if (from < 0 || !block)
    throw new Error('docs/getting-started/local.md has no sh block after "Send a message"');
  return block;
}

/** The commands of a block without their comments: what runs. */
const commands = (block: string) => block.replace(/\s+#.*$/gm, '').replace(/^#.*\n/gm, '');

describe('the first message in the README and the Chinese quick start', () => {
  it('is the same commands as docs/getting-started/local.md (which the test below runs)', async () => {
    const tested = commands(await firstMessageBlock());
    expect(commands(await firstMessageBlock(join(REPO, 'README.md'), 'In a second'))).toBe(tested);
    expect(
      commands(
        await firstMessageBlock(join(REPO, 'docs', 'zh', 'getting-started', 'local.md'), '在第二个终端'),
      ),
    ).toBe(tested);
  });
});

describe.runIf(hasCurl)('docs/getting-started/local.md, pasted as it is', () => {
  let dir: string;
  let stack: ChildProcess | undefined;
  let output = '';

  beforeAll(async () => {
    // A directory of its own, as a fresh checkout's: `npm start` writes its .local/ (config, key, stack.json) there.
    dir = await mkdtemp(join(tmpdir(), 'wgw-quickstart-'));
    stack = spawn(
      process.execPath,
      [
        '--import',
        import.meta.resolve('tsx'),
        '--disable-warning=ExperimentalWarning',
        join(REPO, 'local', 'main.ts'),
      ],
      { cwd: dir, env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    stack.stdout?.on('data', (d) => {
      output += String(d);
    });
    stack.stderr?.on('data', (d) => {
      output += String(d);
    });
    await waitFor(
      () => output.includes('ready in'),
      30_000,
      () => output,
    );
  }, 40_000);

  afterAll(async () => {
    stack?.kill('SIGINT');
    await rm(dir, { recursive: true, force: true });
  });

  it('sends the first message, which arrives and shows sent', async () => {
    // `node` in the block is the one running the tests (the project's Node 22), as npm puts it first on PATH.
    const out = execFileSync('bash', ['-e', '-c', await firstMessageBlock()], {
      cwd: dir,
      env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
      encoding: 'utf8',
      timeout: 30_000,
    });
    const id = /^(msg_[0-9A-Z]{26})$/m.exec(out)?.[1];
    expect(id, out).toBeDefined();
    expect(out).toContain('"content":"hello from wecom-gateway"');
    expect(out).toContain(`{"id":"${id}","app":"ops","status":"sent"`);
  });
});
