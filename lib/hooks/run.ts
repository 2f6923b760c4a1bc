import type { HookConfig, HookSource } from '#lib/config/index.js';
import {
  fitLines,
  LIMITS,
  markdownToText,
  markdownToTextCard,
  type Recipients,
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

/** Markdown (from a template) as the hook's message type, via the Markdown fallback for text and textcard. */
function fromMarkdown(markdown: string, msgtype: string): RenderedMessage {
  if (msgtype === 'text') return { msgtype: 'text', text: { content: markdownToText(markdown) } };
  if (msgtype === 'textcard') return markdownToTextCard(markdown) as RenderedMessage;
  return { msgtype: 'markdown', markdown: { content: fitLines(markdown, LIMITS.markdown.maxContentBytes) } };
}

function render(hook: HookConfig, result: SourceResult, payload: unknown): RenderedMessage {
  const template = hook.template ?? (hook.source === 'generic' ? DEFAULT_TEMPLATE : undefined);
  const msgtype = hook.msgtype ?? ADAPTERS[hook.source].defaultMsgtype;
  if (template === undefined) {
    if (!result.notice)
      throw new Error(`source ${hook.source} returned neither a notice nor a reason to ignore`);
    return renderNotice(result.notice, msgtype);
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
  return fromMarkdown(markdown, msgtype);
}

/**
 * The message part of the body: the app template the hook names, its variables rendered from the payload (ingest
 * renders the template itself and checks them), or else the hook's own rendering.
 */
function message(hook: HookConfig, result: SourceResult, payload: unknown): Record<string, unknown> {
  if (hook.appTemplate !== undefined) {
    const variables = Object.fromEntries(
      Object.entries(hook.appTemplate.variables ?? {}).map(([name, t]) => [name, renderTemplate(t, payload)]),
    );
    return { template: hook.appTemplate.id, variables };
  }
  const rendered = render(hook, result, payload);
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
export function handleHook(hookName: string, hook: HookConfig, input: HookInput): HookOutcome {
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

  const recipients = route.recipients ?? toRecipients(hook.to);
  const body: Record<string, unknown> = {
    app: hook.app,
    ...recipientFields(recipients),
    ...message(hook, result, payload),
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
