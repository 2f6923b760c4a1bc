import type { PushKeyConfig } from '#lib/config/index.js';
import {
  fitLines,
  LIMITS,
  markdownToText,
  markdownToTextCard,
  ROBOT_LIMITS,
  truncateUtf8,
} from '#lib/messages/index.js';
import { createDigestMatcher, type DigestMatcher } from '#lib/security/index.js';
import { HookPayloadError } from './errors.js';
import { bodyText } from './payload.js';
import { toRecipients } from './routing.js';

/**
 * One-URL push, compatible with ServerChan (Server酱) senders: `GET|POST /v1/push/{sendkey}` with `title` (required;
 * the old `text` name is accepted too), `desp` (optional Markdown body) and `short` (optional one-line summary, used
 * as the textcard description), from the query string, a form body or a JSON body — the body wins over the query.
 * Other ServerChan parameters (`channel`, `openid`, `noip`, …) are accepted and ignored.
 */

export interface PushParams {
  title: string;
  desp?: string;
  short?: string;
}

export interface PushRequest {
  /** Raw query string without `?`, or parsed pairs. */
  query?: string | Readonly<Record<string, string | undefined>>;
  contentType?: string;
  rawBody?: string | Buffer;
}

const asString = (x: unknown): string | undefined =>
  typeof x === 'string' ? x : typeof x === 'number' || typeof x === 'boolean' ? String(x) : undefined;

function bodyParams(req: PushRequest): Record<string, unknown> {
  const raw = bodyText(req.rawBody);
  if (raw.trim() === '') return {};
  const type = (req.contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (type === 'application/json' || (type === '' && raw.trimStart().startsWith('{'))) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new HookPayloadError('the body is not JSON', [{ field: '(body)', message: 'must be JSON' }]);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new HookPayloadError('the body must be a JSON object', [
        { field: '(body)', message: 'must be an object' },
      ]);
    }
    return parsed as Record<string, unknown>;
  }
  if (type === 'application/x-www-form-urlencoded' || type === 'text/plain' || type === '') {
    return Object.fromEntries(new URLSearchParams(raw));
  }
  throw new HookPayloadError(`unsupported content type ${type}`, [
    {
      field: 'content-type',
      message: 'send a query string, a form (application/x-www-form-urlencoded) or JSON',
    },
  ]);
}

/**
 * Reads ServerChan parameters from a request. 400 naming `title` when there is none.
 *
 * @example parsePushParams({ query: 'title=Backup%20done&desp=**3** files' }) // { title: 'Backup done', desp: '**3** files' }
 */
export function parsePushParams(req: PushRequest): PushParams {
  const query =
    typeof req.query === 'string' || req.query === undefined
      ? Object.fromEntries(new URLSearchParams(req.query ?? ''))
      : req.query;
  const merged: Record<string, unknown> = { ...query, ...bodyParams(req) };
  const title = (asString(merged.title) ?? asString(merged.text) ?? '').trim();
  if (title === '') {
    throw new HookPayloadError('title is required', [
      { field: 'title', message: 'required (query, form or JSON)' },
    ]);
  }
  const desp = asString(merged.desp)?.trim();
  const short = asString(merged.short)?.trim();
  return { title, ...(desp ? { desp } : {}), ...(short ? { short } : {}) };
}

/**
 * The `POST /v1/messages` body for a push: markdown `## title` + desp by default; `text` and `textcard` through the
 * Markdown fallback (textcard needs a link in desp, else it is sent as text). No Idempotency-Key: ServerChan has
 * no delivery id, and two identical pushes are two messages.
 */
export function pushToMessage(key: PushKeyConfig, params: PushParams): Record<string, unknown> {
  const r = toRecipients(key.to ?? {});
  // A robot's push posts to its group chat (no recipients); markdown may be twice as long.
  const channel =
    key.robot !== undefined
      ? { robot: key.robot }
      : {
          app: key.app,
          ...(r.touser.length > 0 ? { touser: r.touser } : {}),
          ...(r.toparty.length > 0 ? { toparty: r.toparty } : {}),
          ...(r.totag.length > 0 ? { totag: r.totag } : {}),
        };
  const envelope = { ...channel, priority: key.priority, metadata: { push: key.name } };
  const markdownBytes =
    key.robot !== undefined ? ROBOT_LIMITS.markdown.maxContentBytes : LIMITS.markdown.maxContentBytes;
  // The app's template renders the message from the push's parameters, and ingest checks them as its variables.
  if (key.template !== undefined) return { ...envelope, template: key.template, variables: { ...params } };
  const title = params.title.replace(/\s+/g, ' ');
  const markdown = params.desp ? `## ${title}\n${params.desp}` : `## ${title}`;
  let message: Record<string, unknown>;
  if (key.msgtype === 'text') {
    message = { msgtype: 'text', text: { content: markdownToText(markdown) } };
  } else if (key.msgtype === 'textcard') {
    const card = markdownToTextCard(markdown);
    if (card.msgtype === 'textcard' && params.short) {
      card.textcard.description = truncateUtf8(params.short, LIMITS.textcard.maxDescriptionBytes);
    }
    message = { ...card };
  } else {
    const msgtype = key.msgtype === 'markdown_v2' ? 'markdown_v2' : 'markdown';
    message = { msgtype, [msgtype]: { content: fitLines(markdown, markdownBytes) } };
  }
  return { ...envelope, ...message };
}

/** Finds the push key for a sendkey (SHA-256, constant time); build once per container. */
export const createPushKeyMatcher = (keys: readonly PushKeyConfig[]): DigestMatcher<PushKeyConfig> =>
  createDigestMatcher(keys, (k) => k.sha256);
