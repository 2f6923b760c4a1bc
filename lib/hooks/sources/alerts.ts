import * as v from 'valibot';
import { type Line, line, link, type Priority, text } from '#lib/messages/index.js';
import { digest, formatTime, oneLine } from '../format.js';
import { isHttpUrl, type Notice, type NoticeLink, type Tone } from '../notice.js';
import { labelMap, optLabelMap, optStr } from '../payload.js';

/**
 * What Alertmanager's webhook (payload version 4) and Grafana's webhook notifier (version 1, an Alertmanager payload
 * plus a few fields) have in common: a group of alerts with labels and annotations.
 */

export const AlertSchema = v.looseObject({
  status: v.picklist(['firing', 'resolved'], 'must be firing or resolved'),
  labels: labelMap,
  annotations: optLabelMap,
  startsAt: v.string(),
  endsAt: optStr,
  generatorURL: optStr,
  fingerprint: optStr,
});

export const alertGroupEntries = {
  receiver: v.string(),
  status: v.picklist(['firing', 'resolved'], 'must be firing or resolved'),
  groupKey: v.string(),
  truncatedAlerts: v.optional(v.number(), 0),
  groupLabels: optLabelMap,
  commonLabels: optLabelMap,
  commonAnnotations: optLabelMap,
  externalURL: v.string(),
};

export type Alert = v.InferOutput<typeof AlertSchema>;
export interface AlertGroup {
  receiver: string;
  status: 'firing' | 'resolved';
  groupKey: string;
  truncatedAlerts: number;
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
  commonAnnotations: Record<string, string>;
  externalURL: string;
  alerts: readonly Alert[];
}

/** Severity label values that mean "wake someone up" across common conventions. */
const HIGH_SEVERITIES = new Set(['critical', 'page', 'emergency', 'fatal', 'disaster', 'high', 'p1', 'sev1']);

const isHigh = (labels: Record<string, string>) => HIGH_SEVERITIES.has((labels.severity ?? '').toLowerCase());

/** Firing alerts with a critical-class `severity` label → high; resolutions are never urgent. */
export function alertPriority(group: AlertGroup): Priority {
  if (group.status !== 'firing') return 'normal';
  const firing = group.alerts.filter((a) => a.status === 'firing');
  return isHigh(group.commonLabels) || firing.some((a) => isHigh(a.labels)) ? 'high' : 'normal';
}

function tone(group: AlertGroup): Tone {
  if (group.status === 'resolved') return 'ok';
  return alertPriority(group) === 'high' ? 'alert' : 'warning';
}

/** A label matcher set as Alertmanager writes it: `{a="b", c="d"}`, values escaped as in its matcher syntax. */
export function matchers(labels: Record<string, string>): string {
  const quote = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
  const pairs = Object.keys(labels)
    .sort()
    .map((name) => `${name}="${quote(labels[name] ?? '')}"`);
  return `{${pairs.join(', ')}}`;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/**
 * The Alertmanager UI's "new silence" form pre-filled with an alert's labels — the link its own default templates
 * build (`{{ .ExternalURL }}/#/silences/new?filter=…`).
 */
export function silenceUrl(externalURL: string, labels: Record<string, string>): string | undefined {
  if (!isHttpUrl(externalURL)) return undefined;
  return `${trimSlash(externalURL)}/#/silences/new?filter=${encodeURIComponent(matchers(labels))}`;
}

export function alertsUrl(externalURL: string, groupLabels: Record<string, string>): string | undefined {
  if (!isHttpUrl(externalURL)) return undefined;
  const filter =
    Object.keys(groupLabels).length > 0 ? `?filter=${encodeURIComponent(matchers(groupLabels))}` : '';
  return `${trimSlash(externalURL)}/#/alerts${filter}`;
}

/** What tells this alert apart from the rest of its group: its alertname if that differs, then its own labels. */
function distinctLabels(alert: Alert, common: Record<string, string>): string {
  const own = Object.keys(alert.labels)
    .filter((k) => common[k] === undefined && k !== 'alertname')
    .sort()
    .map((k) => `${k}=${alert.labels[k]}`);
  const name = common.alertname === undefined ? alert.labels.alertname : undefined;
  const parts = [...(name ? [name] : []), ...(own.length > 0 ? [own.join(', ')] : [])];
  return parts.length > 0 ? parts.join(' · ') : (alert.labels.alertname ?? 'alert');
}

/** The group's alertname, or the distinct alertnames of its alerts when they differ. */
function groupTitle(group: AlertGroup): string {
  const common = group.groupLabels.alertname ?? group.commonLabels.alertname;
  if (common) return common;
  const names = [
    ...new Set(group.alerts.map((a) => a.labels.alertname).filter((n): n is string => Boolean(n))),
  ];
  return names.length > 0 ? names.join(', ') : group.receiver;
}

export interface AlertItemOptions {
  timeZone: string;
  /** Extra per-alert links after the generator link (silence, dashboard, panel). */
  links: (alert: Alert) => NoticeLink[];
  /** Extra per-alert lines (Grafana values). */
  extra?: (alert: Alert) => string | undefined;
}

function alertItem(alert: Alert, group: AlertGroup, o: AlertItemOptions): Line[] {
  const color = alert.status === 'firing' ? 'warning' : 'info';
  const lines: Line[] = [
    line('paragraph', [
      text(`[${alert.status}]`, { color }),
      text(' '),
      text(distinctLabels(alert, group.commonLabels), { bold: true }),
    ]),
  ];
  const about = alert.annotations.summary ?? alert.annotations.description;
  const commonAbout = group.commonAnnotations.summary ?? group.commonAnnotations.description;
  if (about && about !== commonAbout) lines.push(line('paragraph', [text(oneLine(about))]));
  const extra = o.extra?.(alert);
  if (extra) lines.push(line('paragraph', [text(extra)]));
  const since = formatTime(alert.startsAt, o.timeZone);
  const ended = alert.status === 'resolved' ? formatTime(alert.endsAt, o.timeZone) : undefined;
  const when = [since && `since ${since}`, ended && `resolved ${ended}`].filter(Boolean).join(' · ');
  const links: NoticeLink[] = [];
  if (isHttpUrl(alert.generatorURL)) links.push({ text: 'Source', url: alert.generatorURL });
  links.push(...o.links(alert).filter((l) => isHttpUrl(l.url)));
  const tail = links.flatMap((l) => [text(' · '), link(l.text, l.url)]);
  if (when || tail.length > 0) {
    const inlines = when ? [text(when, { color: 'comment' }), ...tail] : tail.slice(1);
    lines.push(line('paragraph', inlines));
  }
  return lines;
}

export interface GroupNoticeOptions extends AlertItemOptions {
  source: string;
  links: (alert: Alert) => NoticeLink[];
  groupLinks: NoticeLink[];
}

/** The notice for one group notification: firing alerts first, each with its links; "… N more alerts" when long. */
export function alertGroupNotice(group: AlertGroup, o: GroupNoticeOptions): Notice {
  const firing = group.alerts.filter((a) => a.status === 'firing').length;
  const fields = [];
  if (group.commonLabels.severity) fields.push({ key: 'Severity', value: group.commonLabels.severity });
  const common = Object.keys(group.commonLabels)
    .filter((k) => k !== 'alertname' && k !== 'severity')
    .sort()
    .map((k) => `${k}=${group.commonLabels[k]}`);
  if (common.length > 0) fields.push({ key: 'Labels', value: common.join(', ') });
  const summary = group.commonAnnotations.summary ?? group.commonAnnotations.description;
  const ordered = [...group.alerts].sort(
    (a, b) =>
      Number(b.status === 'firing') - Number(a.status === 'firing') || a.startsAt.localeCompare(b.startsAt),
  );
  return {
    source: o.source,
    tone: tone(group),
    badge: group.status === 'firing' ? `FIRING:${firing}` : 'RESOLVED',
    title: groupTitle(group),
    ...(summary ? { summary: oneLine(summary) } : {}),
    fields,
    items: ordered.map((a) => alertItem(a, group, o)),
    hiddenItems: group.truncatedAlerts,
    itemNoun: 'alerts',
    links: o.groupLinks.filter((l) => isHttpUrl(l.url)),
  };
}

/**
 * Alertmanager and Grafana send no delivery id, and a repeat notification (repeat_interval) is byte-identical to
 * the first: for firing alerts Alertmanager hides endsAt ("If the end timestamp is not reached yet, do not expose
 * it", types.Alerts). So the key is the group key, the status and the alerts' identities and times, plus the
 * receipt time in windows of `dedupSeconds`: the vendor's retries (seconds apart) share a key, a reminder hours
 * later does not. A retry that straddles a window boundary is delivered twice — the documented price of having
 * no delivery id.
 */
export function alertDeliveryKey(group: AlertGroup, receivedAt: Date, dedupSeconds: number): string {
  const alerts = group.alerts
    .map((a) => `${a.fingerprint ?? matchers(a.labels)}@${a.status}@${a.startsAt}@${a.endsAt ?? ''}`)
    .sort()
    .join('\n');
  const window = Math.floor(receivedAt.getTime() / 1000 / dedupSeconds);
  return `${group.groupKey}|${group.status}|${digest(alerts).slice(0, 32)}|${window}`;
}
