import type { HookConfig, HookSource } from '#lib/config/index.js';
import {
  fitLines,
  LIMITS,
  markdownToText,
  markdownToTextCard,
  type Recipients,
  ROBOT_LIMITS,
} from '#lib/messages/index.js';
import { renderTemplate } from '#lib/util/index.js';
import { HookPayloadError } from './errors.js';
import { digest } from './format.js';
import { type RenderedMessage, renderNotice } from './notice.js';
import { parseJsonBody } from './payload.js';
import { routeDelivery, toRecipients } from './routing.js';
import { alertmanager } from './sources/alertmanager.js';
import { DEFAULT_TEMPLATE, generic, listing } from './sources/generic.js';
import { github } from './sources/github.js';
import { gitlab } from './sources/gitlab.js';
import { grafana } from './sources/grafana.js';
import { sentry } from './sources/sentry.js';
import type { HookInput, HookOutcome, HookSourceAdapter, SourceResult } from './types.js';

export const ADAPTERS: Readonly<Record<HookSource, HookSourceAdapter>> = {
  alertmanager,
  grafana,
  github,
  gitlab,
  sentry,
  generic,
};

/**
 * The Idempotency-Key a hook's message is accepted under: scoped to the hook (two hooks may see the same vendor
 * id) and hashed, so any vendor id fits the header's 128 visible ASCII characters.
 */
export const hookIdempotencyKey = (hookName: string, deliveryKey: string, index = 0): string =>
  `hook_${digest(`${hookName}\n${deliveryKey}\n${index}`)}`;

/** What the gateway's config says about the robot a hook posts through. */
export interface HookRobot {
  /** The robot mentions people by default (`robots.<name>.mentions`): markdown_v2 cannot, markdown can. */
  mentions: boolean;
}

/** How much markdown a channel takes: 2,048 bytes for an app, 4,096 for a robot. */
const markdownBytes = (hook: HookConfig) =>
  hook.robot !== undefined ? ROBOT_LIMITS.markdown.maxContentBytes : LIMITS.markdown.maxContentBytes;

/**
 * The message type a hook sends: its own `msgtype`, else the source's. A robot's hook renders the sources' markdown
 * as markdown_v2 (tables for alert lists) — unless the robot mentions people by default, which only markdown can;
 * a custom template stays markdown, since it may use colour.
 */
function msgtypeOf(hook: HookConfig, robot: HookRobot | undefined): RenderedMessage['msgtype'] {
  if (hook.msgtype !== undefined) return hook.msgtype;
  const byDefault = ADAPTERS[hook.source].defaultMsgtype;
  if (hook.robot === undefined || byDefault !== 'markdown' || hook.template !== undefined) return byDefault;
  return robot?.mentions ? 'markdown' : 'markdown_v2';
}

/** Markdown (from a template) as the hook's message type, via the Markdown fallback for text and textcard. */
function fromMarkdown(markdown: string, msgtype: string, maxBytes: number): RenderedMessage {
  if (msgtype === 'text') return { msgtype: 'text', text: { content: markdownToText(markdown) } };
  if (msgtype === 'textcard') return markdownToTextCard(markdown) as RenderedMessage;
  if (msgtype === 'markdown_v2')
    return { msgtype: 'markdown_v2', markdown_v2: { content: fitLines(markdown, maxBytes) } };
  return { msgtype: 'markdown', markdown: { content: fitLines(markdown, maxBytes) } };
}

function render(
  hook: HookConfig,
  result: SourceResult,
  payload: unknown,
  robot: HookRobot | undefined,
): RenderedMessage {
  const template = hook.template ?? (hook.source === 'generic' ? DEFAULT_TEMPLATE : undefined);
  const msgtype = msgtypeOf(hook, robot);
  if (template === undefined) {
    if (!result.notice)
      throw new Error(`source ${hook.source} returned neither a notice nor a reason to ignore`);
    return renderNotice(result.notice, msgtype, { markdownBytes: markdownBytes(hook) });
  }
  // Blank-line runs come from sections that rendered nothing; one blank line keeps paragraphs apart.
  let markdown = renderTemplate(template, payload)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  if (markdown === '' && hook.template === undefined) markdown = listing(payload).trim();
  if (markdown === '') {
    throw new HookPayloadError(
      "the hook's template rendered nothing for this payload",
      [{ field: '(body)', message: 'none of the fields the template uses is present' }],
      'hook_template_empty',
    );
  }
  return fromMarkdown(markdown, msgtype, markdownBytes(hook));
}

/**
 * The message part of the body: the app template the hook names, its variables rendered from the payload (ingest
 * renders the template itself and checks them), or else the hook's own rendering.
 */
function message(
  hook: HookConfig,
  result: SourceResult,
  payload: unknown,
  robot: HookRobot | undefined,
): Record<string, unknown> {
  if (hook.appTemplate !== undefined) {
    const variables = Object.fromEntries(
      Object.entries(hook.appTemplate.variables ?? {}).map(([name, t]) => [name, renderTemplate(t, payload)]),
    );
    return { template: hook.appTemplate.id, variables };
  }
  const rendered = render(hook, result, payload, robot);
  return {
    msgtype: rendered.msgtype,
    [rendered.msgtype]: (rendered as Record<string, unknown>)[rendered.msgtype],
  };
}

const recipientFields = (r: Recipients) => ({
  ...(r.touser.length > 0 ? { touser: r.touser } : {}),
  ...(r.toparty.length > 0 ? { toparty: r.toparty } : {}),
  ...(r.totag.length > 0 ? { totag: r.totag } : {}),
});

const MAX_METADATA = 512;

/**
 * Turns one inbound delivery into the gateway messages to accept (today always one), or into "ignored" (GitHub
 * ping, an event the source does not render, a rule with `ignore`). Pure and deterministic: the same delivery
 * always yields the same bodies and keys, so a vendor's retry is accepted as the same message.
 *
 * Order matters: the signature is checked over the raw bytes before the body is parsed; then the source reads the
 * payload (400 naming the fields when it is not the vendor's); then rules route it; then it is rendered.
 * Throws HookSignatureError (401) or HookPayloadError (400).
 *
 * @example const outcome = handleHook('prom', config.hooks.prom, { rawBody, headers, receivedAt: new Date() });
 */
export function handleHook(
  hookName: string,
  hook: HookConfig,
  input: HookInput,
  robot?: HookRobot,
): HookOutcome {
  const adapter = ADAPTERS[hook.source];
  adapter.verify?.(input, hook);
  const payload = parseJsonBody(input);
  const result = adapter.translate(payload, input, hook);
  const { event, deliveryKey } = result;
  const base = { event, ...(deliveryKey === undefined ? {} : { deliveryKey }) };
  if (!result.notice && result.ignoredReason !== undefined) {
    return { kind: 'ignored', ...base, reason: result.ignoredReason };
  }
  const route = routeDelivery(hook.rules ?? [], payload, event);
  if (route.ignore)
    return { kind: 'ignored', ...base, reason: `ignored by rule ${route.matched.join(', ')}` };

  // A robot posts to its group chat: no recipients (its config refuses `to` on the hook and its rules).
  const channel =
    hook.robot !== undefined
      ? { robot: hook.robot }
      : { app: hook.app, ...recipientFields(route.recipients ?? toRecipients(hook.to ?? {})) };
  const body: Record<string, unknown> = {
    ...channel,
    ...message(hook, result, payload, robot),
    priority: route.priority ?? hook.priority ?? result.priority ?? 'normal',
    // A per-hook delay is a send_at like a client's (docs/scheduling.md).
    ...(hook.delaySeconds !== undefined
      ? { send_at: new Date(input.receivedAt.getTime() + hook.delaySeconds * 1000).toISOString() }
      : {}),
    metadata: {
      hook: hookName,
      source: hook.source,
      event: event.slice(0, MAX_METADATA),
      ...(deliveryKey === undefined ? {} : { delivery: deliveryKey.slice(0, MAX_METADATA) }),
    },
  };
  return {
    kind: 'messages',
    ...base,
    messages: [
      {
        body,
        ...(deliveryKey === undefined ? {} : { idempotencyKey: hookIdempotencyKey(hookName, deliveryKey) }),
      },
    ],
  };
}
