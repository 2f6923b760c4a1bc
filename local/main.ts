/**
 * `npm start`: the gateway offline, on loopback, with everything it needs. Honours PORT, GATEWAY_CONFIG and
 * WECOM_API_BASE (SPEC §3), and WECOM_SIM_READINGS for the simulator. Ctrl-C stops every part and exits 0.
 */
import { resolve } from 'node:path';
import { ConfigError } from '#lib/config/index.js';
import { ensureDevConfig } from './dev-config.js';
import { readStackInfo, removeStackInfo, writeStackInfo } from './local-dir.js';
import { isPortClash, portClashMessage } from './port-clash.js';
import { LOCAL_REGION, type LocalStack, startLocalStack } from './stack.js';
import {
  DEFAULT_READINGS,
  READING_PRESETS,
  resolveReadings,
  type SimReadings,
  SimulatorError,
} from './wecom-sim/index.js';

const DEFAULT_PORT = 3000;

/** WECOM_SIM_READINGS: a preset name (`strict`, `lenient`) or a JSON object of readings (wecom-sim/readings.ts). */
function simulatorReadings(raw: string | undefined): SimReadings | undefined {
  if (!raw) return undefined;
  try {
    return resolveReadings(raw.trim().startsWith('{') ? JSON.parse(raw) : raw.trim(), DEFAULT_READINGS);
  } catch (err) {
    if (err instanceof SyntaxError || err instanceof SimulatorError)
      throw new ConfigError(`WECOM_SIM_READINGS: ${err.message}`);
    throw err;
  }
}

function describeReadings(r: SimReadings): string {
  const same = (a: Readonly<SimReadings>) => JSON.stringify(a) === JSON.stringify(r);
  if (same(READING_PRESETS.strict)) return 'strict';
  if (same(READING_PRESETS.lenient)) return 'lenient';
  return JSON.stringify(r);
}

/** What `npm start` prints once the stack is up: where everything is, and a first request to try. */
function printBanner(
  say: (line: string) => void,
  stack: LocalStack,
  { apiKey, configFile, startedMs }: { apiKey: string | undefined; configFile: string; startedMs: number },
): void {
  say('');
  say(`  API            ${stack.apiUrl}`);
  say(`  console        ${stack.apiUrl}/console   (sign in with an API key)`);
  if (apiKey) say(`  dev API key    ${apiKey}`);
  else say(`  API keys       from ${configFile} (only their SHA-256 is stored there)`);
  say(
    stack.simulator
      ? `  WeCom sim      ${stack.simulator.url}   (inspect: ${stack.simulator.url}/__sim/stats, /__sim/inbox/<userid>)`
      : `  WeCom          ${stack.wecomApiBase}   (WECOM_API_BASE: messages go to this WeCom)`,
  );
  if (stack.simulator) {
    say(`  sim inbox      ${stack.simulator.inboxUrl}   (each member's messages as WeCom shows them)`);
    say(`  sim readings   ${describeReadings(stack.simulator.readings())}   (WECOM_SIM_READINGS)`);
  }
  say(`  config         ${configFile}`);
  const hooks = Object.keys(stack.config.hooks ?? {});
  if (hooks.length > 0)
    say(`  hooks          ${stack.apiUrl}/v1/hooks/<hook>/<token>   (${hooks.join(', ')})`);
  const pushKeys = (stack.config.pushKeys ?? []).map((k) => k.name);
  if (pushKeys.length > 0)
    say(`  push           ${stack.apiUrl}/v1/push/<sendkey>   (${pushKeys.join(', ')})`);
  say(`  DynamoDB       ${stack.dynamoEndpoint}   SQS ${stack.sqsEndpoint}`);
  say(`  ready in ${Date.now() - startedMs} ms — Ctrl-C to stop`);
  say('');
  if (apiKey) {
    say('  try:');
    say(`    curl -s ${stack.apiUrl}/v1/messages -H "Authorization: Bearer ${apiKey}" \\`);
    say(`      -H 'Content-Type: application/json' \\`);
    say(
      `      -d '{"app":"ops","touser":"zhangsan","msgtype":"text","text":{"content":"hello from wecom-gateway"}}'`,
    );
    if (stack.simulator) {
      say(`    curl -s ${stack.simulator.url}/__sim/inbox/zhangsan`);
      say(`  then open ${stack.simulator.inboxUrl}/zhangsan in a browser`);
    }
    say('');
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const port = process.env.PORT ? Number(process.env.PORT) : DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`PORT must be 0-65535, got ${process.env.PORT}`);
  const wecomApiBase = process.env.WECOM_API_BASE || undefined;
  const readings = simulatorReadings(process.env.WECOM_SIM_READINGS);
  const localDir = resolve('.local');
  let configFile = process.env.GATEWAY_CONFIG ? resolve(process.env.GATEWAY_CONFIG) : undefined;
  let apiKey: string | undefined;
  if (!configFile) ({ configFile, apiKey } = await ensureDevConfig(localDir));

  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(
    `wecom-gateway: starting the local stack (DynamoDB + SQS emulators, ${wecomApiBase ? `sending to ${wecomApiBase}` : 'WeCom simulator'}, API, sender)…`,
  );
  const verbose = process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'info';
  const stack: LocalStack = await startLocalStack({
    port,
    simulatorPort: port === 0 ? 0 : port + 1,
    configFile,
    ...(wecomApiBase ? { wecomApiBase } : {}),
    ...(readings ? { simulator: { readings } } : {}),
    logWrite: (line) => {
      // Function logs are JSON lines; show warnings and errors by default, everything with LOG_LEVEL=info.
      if (verbose || /"level":"(warn|error)"/.test(line)) say(line);
    },
  });

  // Lets `npx wecom-gateway send|status|apps|dlq` find this stack without --url (best effort: the API works without it).
  await writeStackInfo(localDir, {
    apiUrl: stack.apiUrl,
    ...(stack.simulator ? { simulatorUrl: stack.simulator.url } : {}),
    aws: {
      region: LOCAL_REGION,
      dynamoEndpoint: stack.dynamoEndpoint,
      sqsEndpoint: stack.sqsEndpoint,
      tableName: stack.resources.tableName,
      queueUrls: stack.resources.queueUrls,
    },
    pid: process.pid,
  }).catch(() => undefined);

  // Built now so the first page load does not wait for esbuild; the API works without it.
  await stack.simulator?.warmInbox().catch((err: unknown) => {
    say(`  (the sim inbox page could not be built: ${err instanceof Error ? err.message : String(err)})`);
  });
  printBanner(say, stack, { apiKey, configFile, startedMs: started });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`\nwecom-gateway: ${signal} received, stopping…`);
    const timer = setTimeout(() => {
      say('wecom-gateway: shutdown took too long, exiting');
      process.exit(1);
    }, 10_000);
    timer.unref();
    await stack.stop();
    await removeStackInfo(localDir).catch(() => undefined);
    say('wecom-gateway: stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/** The error as the operator should read it: a clear sentence for what they can fix, the stack for a bug. */
async function describeFailure(err: unknown): Promise<string> {
  if (err instanceof ConfigError) return err.message;
  if (isPortClash(err)) {
    const apiPort = process.env.PORT ? Number(process.env.PORT) : DEFAULT_PORT;
    const running = await readStackInfo(resolve('.local')).catch(() => undefined);
    return portClashMessage({ port: err.port, address: err.address, apiPort, running });
  }
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

main().catch(async (err: unknown) => {
  process.stderr.write(`wecom-gateway: could not start: ${await describeFailure(err)}\n`);
  process.exit(1);
});
