import * as v from 'valibot';
import { readPayload } from '../payload.js';
import type { HookSourceAdapter } from '../types.js';
import {
  AlertSchema,
  alertDeliveryKey,
  alertGroupEntries,
  alertGroupNotice,
  alertPriority,
} from './alerts.js';

/**
 * Grafana Alerting's webhook notifier (https://grafana.com/docs/grafana/latest/alerting/configure-notifications/
 * manage-contact-points/integrations/webhook-notifier/): an Alertmanager-style group, `version` "1", plus `orgId`,
 * `state`, `title`, `message` and per alert `silenceURL`, `dashboardURL`, `panelURL`, `values`.
 * Grafana's own templated `message` is not used: the structured fields render better, and a hook `template` such
 * as `{{message}}` sends Grafana's text instead.
 */
const GrafanaAlertSchema = v.looseObject({
  ...AlertSchema.entries,
  silenceURL: v.optional(v.nullable(v.string())),
  dashboardURL: v.optional(v.nullable(v.string())),
  panelURL: v.optional(v.nullable(v.string())),
  imageURL: v.optional(v.nullable(v.string())),
  values: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  valueString: v.optional(v.nullable(v.string())),
});

const PayloadSchema = v.looseObject({
  version: v.literal(
    '1',
    'must be "1" (Grafana webhook payload; Alertmanager sends "4": use source alertmanager)',
  ),
  orgId: v.number(),
  ...alertGroupEntries,
  alerts: v.array(GrafanaAlertSchema),
  title: v.optional(v.string()),
  state: v.optional(v.string()),
});

type GrafanaAlert = v.InferOutput<typeof GrafanaAlertSchema>;

/** `B=44.24, C=1`: the query and expression values that fired, rounded for reading. */
function values(alert: GrafanaAlert): string | undefined {
  if (!alert.values || Object.keys(alert.values).length === 0) return undefined;
  const show = (x: unknown) => (typeof x === 'number' ? String(Math.round(x * 100) / 100) : String(x));
  return Object.entries(alert.values)
    .map(([k, x]) => `${k}=${show(x)}`)
    .join(', ');
}

export const grafana: HookSourceAdapter = {
  source: 'grafana',
  defaultMsgtype: 'markdown',
  translate(payload, input, hook) {
    const group = readPayload(PayloadSchema, payload, 'a Grafana webhook notifier payload (version 1)');
    const base = group.externalURL.replace(/\/+$/, '');
    return {
      event: group.status,
      deliveryKey: alertDeliveryKey(group, input.receivedAt, hook.dedupSeconds),
      priority: alertPriority(group),
      notice: alertGroupNotice(group, {
        source: 'Grafana',
        timeZone: hook.timeZone,
        // alertGroupNotice hands back the objects it was given, which are Grafana alerts.
        extra: (alert) => values(alert as GrafanaAlert),
        links: (alert) => {
          const g = alert as GrafanaAlert;
          const out = [];
          if (g.dashboardURL) out.push({ text: 'Dashboard', url: g.dashboardURL });
          if (g.panelURL) out.push({ text: 'Panel', url: g.panelURL });
          if (g.silenceURL && g.status === 'firing') out.push({ text: 'Silence', url: g.silenceURL });
          return out;
        },
        groupLinks: [{ text: 'Grafana', url: `${base}/alerting/list` }],
      }),
    };
  },
};
