import { type GatewayConfig, parseConfig } from '#lib/config/index.js';
import { sha256Hex } from '#lib/security/index.js';
import type { ReceivedMessage } from '#local/wecom-sim/index.js';
import { waitFor } from './gateway.js';
import {
  type ApiResponse,
  type IngestGateway,
  rawRequest,
  startIngestGateway,
  storedState,
} from './ingest-gateway.js';

/** The URL token of every hook of {@link startHookGateway} is `token-<hook name>`. */
export const hookToken = (name: string): string => `token-${name}`;

/**
 * The ingest test stack (apps `ops` and `billing`, see ingest-gateway.ts) with the given hooks and push keys added
 * and run through parseConfig, so every default (time zone, dedup window, push msgtype) is what a deployed
 * gateway would load. Each hook's token is {@link hookToken}; `pushKeys` map a sendkey to its config.
 */
export async function startHookGateway(opts: {
  hooks: Record<string, Record<string, unknown>>;
  pushKeys?: Record<string, Record<string, unknown>>;
  apps?: Record<string, Record<string, unknown>>;
}): Promise<IngestGateway> {
  return startIngestGateway({
    configure: (config) => {
      for (const [app, extra] of Object.entries(opts.apps ?? {})) {
        Object.assign(config.apps[app] as object, extra);
      }
      const parsed = parseConfig({
        ...config,
        hooks: Object.fromEntries(
          Object.entries(opts.hooks).map(([name, hook]) => [
            name,
            { tokenSha256: sha256Hex(hookToken(name)), ...hook },
          ]),
        ),
        pushKeys: Object.entries(opts.pushKeys ?? {}).map(([sendkey, key]) => ({
          sha256: sha256Hex(sendkey),
          ...key,
        })),
      });
      Object.assign(config, parsed satisfies GatewayConfig);
    },
  });
}

/** POSTs raw bytes to a hook URL, as a vendor does. */
export const postHook = (
  gw: IngestGateway,
  hook: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
  token = hookToken(hook),
): Promise<ApiResponse> =>
  rawRequest(
    gw.stack.apiUrl,
    'POST',
    `/v1/hooks/${encodeURIComponent(hook)}/${encodeURIComponent(token)}`,
    { 'content-type': 'application/json', ...headers },
    body,
  );

/** Waits until `user`'s simulator inbox holds `count` messages, and returns them. */
export async function inboxOf(gw: IngestGateway, user: string, count = 1): Promise<ReceivedMessage[]> {
  const list = () => gw.stack.simulator?.inbox(user) ?? [];
  await waitFor(
    () => list().length >= count,
    20_000,
    () => `${user}'s inbox holds ${list().length} of ${count} messages`,
  );
  return list();
}

/** A received WeCom message as a reader would see it: its msgtype, then text verbatim or cards as JSON. */
export function shown(message: ReceivedMessage | undefined): string {
  if (!message) return '(nothing)';
  const payload = message.payload as Record<string, unknown>;
  const body = typeof payload.content === 'string' ? payload.content : JSON.stringify(payload, null, 2);
  return `${message.msgtype}\n---\n${body}`;
}

/**
 * The stored state (lanes and table) once the sender has taken every queued message: what a rejected request must
 * leave unchanged. Read while an earlier message is still queued, the lane depth would change under the test.
 */
export async function settledState(gw: IngestGateway): Promise<Awaited<ReturnType<typeof storedState>>> {
  let state = await storedState(gw.stack);
  await waitFor(
    async () => {
      state = await storedState(gw.stack);
      return state.high === 0 && state.normal === 0;
    },
    20_000,
    () => `lanes still hold messages: ${JSON.stringify(state)}`,
  );
  return state;
}
