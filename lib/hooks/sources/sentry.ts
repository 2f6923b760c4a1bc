import * as v from 'valibot';
import { verifyHmacSha256Hex } from '#lib/security/index.js';
import { HookSignatureError } from '../errors.js';
import { oneLine } from '../format.js';
import { type NoticeField, noticeFrom, type Tone } from '../notice.js';
import { optStr, readPayload, requireHeader, str } from '../payload.js';
import type { HookInput, HookSourceAdapter, SourceResult } from '../types.js';

/**
 * Sentry integration platform webhooks (https://docs.sentry.io/organization/integrations/integration-platform/webhooks/):
 * `Sentry-Hook-Resource` names the resource; rendered are `event_alert` (an issue alert rule fired, "action" is
 * always `triggered`) and `issue` (created, resolved, assigned, archived, unresolved). `Sentry-Hook-Signature` is
 * the hex HMAC-SHA256 of the body under the integration's client secret. Sentry's sample verifies it over
 * `JSON.stringify(request.body)`; the gateway verifies the bytes received, which is what Sentry signed.
 */

function verify(input: HookInput, secret: string | undefined): void {
  if (secret === undefined) return;
  const signature = input.headers['sentry-hook-signature']?.trim();
  if (!signature) throw new HookSignatureError('Sentry-Hook-Signature', true);
  if (!verifyHmacSha256Hex(secret, input.rawBody, signature)) {
    throw new HookSignatureError('Sentry-Hook-Signature', false);
  }
}

const EventAlertSchema = v.looseObject({
  action: str,
  data: v.looseObject({
    event: v.looseObject({
      event_id: str,
      title: str,
      web_url: str,
      issue_id: v.optional(v.union([v.string(), v.number()])),
      culprit: optStr,
      level: optStr,
      release: optStr,
      environment: optStr,
      platform: optStr,
      tags: v.optional(v.nullable(v.array(v.tuple([v.string(), v.string()])))),
    }),
    triggered_rule: str,
  }),
});

const IssueSchema = v.looseObject({
  action: str,
  data: v.looseObject({
    issue: v.looseObject({
      id: str,
      title: str,
      shortId: optStr,
      culprit: optStr,
      level: optStr,
      status: optStr,
      substatus: optStr,
      web_url: optStr,
      permalink: optStr,
      project: v.optional(v.looseObject({ slug: optStr, name: optStr })),
      assignedTo: v.optional(v.nullable(v.looseObject({ name: optStr, email: optStr }))),
      count: v.optional(v.union([v.string(), v.number()])),
      userCount: v.optional(v.number()),
    }),
  }),
});

const LEVEL_TONE: Record<string, Tone> = { fatal: 'alert', error: 'alert', warning: 'warning' };
const notice = noticeFrom('Sentry');

/** The organization and project slugs from a Sentry web URL (`/organizations/{org}/issues/…`). */
const orgOf = (url: string) => /\/organizations\/([^/]+)\//.exec(url)?.[1];

function eventAlert(payload: unknown): SourceResult {
  const p = readPayload(EventAlertSchema, payload, 'a Sentry event_alert webhook payload');
  const e = p.data.event;
  const tag = (name: string) => e.tags?.find(([k]) => k === name)?.[1];
  const level = e.level ?? tag('level') ?? 'error';
  const environment = e.environment ?? tag('environment');
  const org = orgOf(e.web_url);
  const fields: NoticeField[] = [
    { key: 'Rule', value: p.data.triggered_rule },
    { key: 'Level', value: level },
  ];
  if (environment) fields.push({ key: 'Environment', value: environment });
  if (e.release) fields.push({ key: 'Release', value: e.release });
  if (org) fields.push({ key: 'Organization', value: org });
  return {
    event: 'event_alert.triggered',
    // One rule firing for one event is one alert, whatever the Request-ID of a retry.
    deliveryKey: `event_alert:${e.event_id}:${p.data.triggered_rule}`,
    priority: level === 'fatal' ? 'high' : 'normal',
    notice: notice({
      tone: LEVEL_TONE[level] ?? 'info',
      badge: level.toUpperCase(),
      title: oneLine(e.title),
      ...(e.culprit ? { summary: oneLine(e.culprit) } : {}),
      fields,
      links: [{ text: 'Event', url: e.web_url }],
    }),
  };
}

const ISSUE_TONE: Record<string, Tone> = {
  resolved: 'ok',
  archived: 'info',
  assigned: 'info',
  ignored: 'info',
};

function issue(payload: unknown): SourceResult {
  const p = readPayload(IssueSchema, payload, 'a Sentry issue webhook payload');
  const i = p.data.issue;
  const level = i.level ?? 'error';
  const url = i.web_url ?? i.permalink;
  const fields: NoticeField[] = [];
  if (i.project?.slug || i.project?.name)
    fields.push({ key: 'Project', value: (i.project.slug ?? i.project.name) as string });
  fields.push({ key: 'Level', value: level });
  if (i.substatus) fields.push({ key: 'Status', value: `${i.status ?? ''} (${i.substatus})`.trim() });
  if (i.assignedTo?.name) fields.push({ key: 'Assigned', value: i.assignedTo.name });
  if (i.count !== undefined) fields.push({ key: 'Events', value: String(i.count) });
  return {
    event: `issue.${p.action}`,
    notice: notice({
      tone: ISSUE_TONE[p.action] ?? LEVEL_TONE[level] ?? 'info',
      badge: i.shortId ? `${i.shortId} ${p.action}` : p.action,
      title: oneLine(i.title),
      ...(i.culprit ? { summary: oneLine(i.culprit) } : {}),
      fields,
      links: url ? [{ text: 'Issue', url }] : [],
    }),
  };
}

export const sentry: HookSourceAdapter = {
  source: 'sentry',
  defaultMsgtype: 'template_card',
  verify: (input, hook) => verify(input, hook.secret),
  translate(payload, input) {
    const resource = requireHeader(
      input,
      'sentry-hook-resource',
      'Sentry names the resource in Sentry-Hook-Resource',
    );
    const requestId = input.headers['request-id']?.trim();
    let result: SourceResult;
    if (resource === 'event_alert') result = eventAlert(payload);
    else if (resource === 'issue') result = issue(payload);
    else result = { event: resource, ignoredReason: `Sentry ${resource} webhooks are not rendered` };
    return result.deliveryKey === undefined && requestId ? { ...result, deliveryKey: requestId } : result;
  },
};
