import type { ApiKeyConfig } from '#lib/config/index.js';
import { type Channel, channelOf } from '#lib/messages/index.js';
import type { MessageRecord } from '#lib/model/index.js';
import { AccessDeniedError, MessageNotFoundError } from './errors.js';
import { MESSAGE_ID } from './ids.js';
import type { IngestDeps, Principal } from './types.js';

/**
 * The same answer for apps that exist and apps that do not, so a key cannot probe other teams' app names; it
 * lists the key's own apps, which is what someone who mistyped a name needs.
 */
export function authorizeApp(principal: Principal, app: string): void {
  if (!principal.apps.includes(app)) {
    throw new AccessDeniedError(
      `app '${app.slice(0, 64)}' is not configured for API key ${principal.name} (its apps: ${principal.apps.join(', ')})`,
    );
  }
}

/** Whether the key may use the channel: its app in `apps`, its robot in `robots`. */
export const mayUse = (principal: Principal, channel: Channel): boolean =>
  channel.kind === 'robot'
    ? (principal.robots ?? []).includes(channel.name)
    : principal.apps.includes(channel.name);

/** {@link authorizeApp} for either channel: a robot the key does not list is refused the same way, naming its robots. */
export function authorizeChannel(principal: Principal, channel: Channel): void {
  if (channel.kind === 'app') {
    authorizeApp(principal, channel.name);
    return;
  }
  if (!mayUse(principal, channel)) {
    const robots = principal.robots ?? [];
    throw new AccessDeniedError(
      `robot '${channel.name.slice(0, 64)}' is not configured for API key ${principal.name} (its robots: ${robots.length > 0 ? robots.join(', ') : 'none'})`,
    );
  }
}

/** The scope a route asks for (lib/resources `ROUTES`); the ingest handler checks it before calling in here. */
export function requireScope(apiKey: ApiKeyConfig, scope: ApiKeyConfig['scopes'][number]): void {
  if (!apiKey.scopes.includes(scope))
    throw new AccessDeniedError(`API key ${apiKey.name} lacks the ${scope} scope`);
}

/** A message the key may read: 404 (not 403) for ids of apps it may not, so ids do not leak. */
export async function readOwn(deps: IngestDeps, apiKey: ApiKeyConfig, id: string): Promise<MessageRecord> {
  if (!MESSAGE_ID.test(id)) throw new MessageNotFoundError(`no message ${id.slice(0, 64)}`);
  const record = await deps.messages.get(id);
  if (!record || !mayUse(apiKey, channelOf(record))) throw new MessageNotFoundError(`no message ${id}`);
  return record;
}
