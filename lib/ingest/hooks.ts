import type { GatewayConfig, PushKeyConfig } from '#lib/config/index.js';
import {
  createHookFinder,
  createPushKeyMatcher,
  type HookFinder,
  type HookInput,
  handleHook,
  type PushRequest,
  parsePushParams,
  pushToMessage,
} from '#lib/hooks/index.js';
import type { DigestMatcher } from '#lib/security/index.js';
import { UnauthenticatedError } from './errors.js';
import { checkSchedule } from './schedule.js';
import { acceptOne, validate } from './service.js';
import type { Accepted, IngestDeps, Principal } from './types.js';

/** What a hook delivery is answered with (docs/api.md). */
export interface HookReceipt {
  /** `queued`: every message of the delivery is queued (or was, by the first of the vendor's retries). */
  status: 'queued' | 'ignored';
  /** The event as the vendor names it (`firing`, `push`, `pull_request.closed`, `ping`, …). */
  event: string;
  messages: Accepted[];
  /** Why nothing was sent, for `ignored`. */
  reason?: string;
}

/** What a push is answered with: ours (`id`, `status`) beside ServerChan's (`code`, `message`, `data`). */
export interface PushReceipt extends Accepted {
  code: 0;
  message: '';
  data: { pushid: string; errno: 0; error: 'SUCCESS' };
}

interface Credentials {
  findHook: HookFinder;
  findPushKey: DigestMatcher<PushKeyConfig>;
}

/** Built on the first hook or push of a container (the stored digests decoded once), then reused. */
const credentialsByConfig = new WeakMap<GatewayConfig, Credentials>();

function credentials(config: GatewayConfig): Credentials {
  let found = credentialsByConfig.get(config);
  if (!found) {
    found = {
      findHook: createHookFinder(config.hooks ?? {}),
      findPushKey: createPushKeyMatcher(config.pushKeys ?? []),
    };
    credentialsByConfig.set(config, found);
  }
  return found;
}

/**
 * `POST /v1/hooks/{hook}/{token}`: authenticates the URL's token for that hook alone (401, the same answer for a
 * wrong name and a wrong token), lets the hook's source verify its signature over the raw bytes and read the
 * payload (401/400, nothing stored), then accepts each message like `POST /v1/messages` with the delivery's
 * Idempotency-Key, so a vendor's retry is answered with the first delivery's ids and sent once.
 *
 * @example await receiveHook(deps, 'prom', token, { rawBody, headers }) // { status: 'queued', event: 'firing', messages: [{ id, status }] }
 */
export async function receiveHook(
  deps: IngestDeps,
  hookName: string,
  token: string,
  input: Omit<HookInput, 'receivedAt'>,
): Promise<HookReceipt> {
  const hook = credentials(deps.config).findHook(hookName, token);
  if (!hook) throw new UnauthenticatedError('unknown hook or wrong token in the hook URL');
  const receivedAt = new Date((deps.now ?? Date.now)());
  const robot = hook.robot !== undefined ? deps.config.robots?.[hook.robot] : undefined;
  const outcome = handleHook(
    hookName,
    hook,
    { ...input, receivedAt },
    robot ? { mentions: (robot.mentions?.users?.length ?? 0) > 0 } : undefined,
  );
  if (outcome.kind === 'ignored') {
    deps.logger.info('hook delivery ignored', {
      hook: hookName,
      event: outcome.event,
      reason: outcome.reason,
    });
    return { status: 'ignored', event: outcome.event, messages: [], reason: outcome.reason };
  }
  const principal = principalOf(`hook:${hookName}`, hook);
  // Validated all before any is accepted: a delivery that cannot be sent whole queues nothing.
  const requests = outcome.messages.map((m) => {
    const req = validate(deps, principal, m.body);
    checkSchedule(principal, req, receivedAt.getTime());
    return { req, key: m.idempotencyKey };
  });
  const messages: Accepted[] = [];
  for (const { req, key } of requests) {
    messages.push(
      await acceptOne(deps, principal, req, key === undefined ? undefined : { key, sameRequest: key }),
    );
  }
  deps.logger.info('hook delivery queued', {
    hook: hookName,
    event: outcome.event,
    messageIds: messages.map((m) => m.id),
  });
  return { status: 'queued', event: outcome.event, messages };
}

/** A hook or push key acts for its one app, or its one robot. */
const principalOf = (
  name: string,
  entry: { app?: string | undefined; robot?: string | undefined },
): Principal => ({
  name,
  apps: entry.app !== undefined ? [entry.app] : [],
  robots: entry.robot !== undefined ? [entry.robot] : [],
});

/** ServerChan URLs end in `.send` (`https://sctapi.ftqq.com/<sendkey>.send`); a migrated URL keeps working. */
const SENDKEY_SUFFIX = '.send';

/**
 * `GET|POST /v1/push/{sendkey}`: one-URL push in ServerChan's parameters (`title`, `desp`, `short`; query, form or
 * JSON). The sendkey picks the app and recipients (401 for an unknown one); a message without a title is a 400.
 * No Idempotency-Key: ServerChan has no delivery id, two identical pushes are two messages.
 *
 * @example await receivePush(deps, sendkey, { query: 'title=Backup%20done' })
 */
export async function receivePush(
  deps: IngestDeps,
  sendkey: string,
  request: PushRequest,
): Promise<PushReceipt> {
  const presented = sendkey.endsWith(SENDKEY_SUFFIX) ? sendkey.slice(0, -SENDKEY_SUFFIX.length) : sendkey;
  const key = credentials(deps.config).findPushKey(presented);
  if (!key) throw new UnauthenticatedError('unknown sendkey in the push URL');
  const principal = principalOf(`push:${key.name}`, key);
  const req = validate(deps, principal, pushToMessage(key, parsePushParams(request)));
  const accepted = await acceptOne(deps, principal, req);
  return {
    ...accepted,
    code: 0,
    message: '',
    data: { pushid: accepted.id, errno: 0, error: 'SUCCESS' },
  };
}
