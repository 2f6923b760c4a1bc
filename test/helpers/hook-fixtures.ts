import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type HookConfig, parseConfig } from '#lib/config/index.js';
import type { HookInput, HookMessage, HookOutcome } from '#lib/hooks/index.js';
import { utf8Bytes, validateMessageRequest } from '#lib/messages/index.js';
import { minimalConfig } from './unit-config.js';

/** Vendor payloads built from each vendor's public docs (see test/fixtures/hooks/<source>/SOURCE.md). */
export function fixture(source: string, name: string): string {
  return readFileSync(join(import.meta.dirname, '..', 'fixtures', 'hooks', source, `${name}.json`), 'utf8');
}

export const TOKEN = 'hook-token-0123456789';
export const RECEIVED_AT = new Date('2026-11-30T08:16:00Z');

/** A hook as the gateway would load it: through parseConfig, so every default is filled in. */
export function hookConfig(over: Record<string, unknown>): HookConfig {
  const config = parseConfig({
    ...minimalConfig(),
    hooks: { h: { app: 'ops', to: { touser: 'oncall' }, tokenSha256: 'b'.repeat(64), ...over } },
  });
  const hook = config.hooks?.h;
  if (!hook) throw new Error('hook missing after parseConfig');
  return hook;
}

export function hookInput(
  rawBody: string,
  headers: Record<string, string> = {},
  receivedAt = RECEIVED_AT,
): HookInput {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { rawBody: Buffer.from(rawBody, 'utf8'), headers: lower, receivedAt };
}

export const hmacHex = (secret: string, body: string) =>
  createHmac('sha256', secret).update(body).digest('hex');

/** The single message of an outcome, after checking that POST /v1/messages would accept it as it is. */
export function onlyMessage(outcome: HookOutcome): HookMessage {
  if (outcome.kind !== 'messages') throw new Error(`expected a message, got ignored: ${outcome.reason}`);
  expect(outcome.messages).toHaveLength(1);
  const [message] = outcome.messages;
  if (!message) throw new Error('no message');
  const result = validateMessageRequest(message.body);
  expect(result.ok ? [] : result.issues).toEqual([]);
  return message;
}

/**
 * A readable snapshot of a message body: the gateway fields on one line, then the content as a reader would see
 * the raw WeCom payload (markdown/text verbatim, cards as indented JSON), with its size in bytes.
 */
export function readable(body: Record<string, unknown>): string {
  const { app, msgtype, priority, metadata, touser, toparty, totag } = body;
  const content = body[msgtype as string] as Record<string, unknown>;
  const to = Object.entries({ touser, toparty, totag })
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${(v as string[]).join('|')}`)
    .join(' ');
  const head = `app=${app} ${to} msgtype=${msgtype} priority=${priority} metadata=${JSON.stringify(metadata)}`;
  const shown =
    typeof content.content === 'string'
      ? `${content.content}\n(${utf8Bytes(content.content)} bytes)`
      : JSON.stringify(content, null, 2);
  return `${head}\n---\n${shown}`;
}
