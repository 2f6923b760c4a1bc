import * as v from 'valibot';
import { readPayload } from '../payload.js';
import type { HookSourceAdapter } from '../types.js';
import {
  AlertSchema,
  alertDeliveryKey,
  alertGroupEntries,
  alertGroupNotice,
  alertPriority,
  alertsUrl,
  silenceUrl,
} from './alerts.js';

/**
 * Prometheus Alertmanager `webhook_config`, payload version 4
 * (https://prometheus.io/docs/alerting/latest/configuration/#webhook_config).
 */
const PayloadSchema = v.looseObject({
  version: v.literal(
    '4',
    'must be "4" (Alertmanager webhook payload version 4; Grafana sends "1": use source grafana)',
  ),
  ...alertGroupEntries,
  alerts: v.array(AlertSchema),
});

export const alertmanager: HookSourceAdapter = {
  source: 'alertmanager',
  defaultMsgtype: 'markdown',
  translate(payload, input, hook) {
    const group = readPayload(PayloadSchema, payload, 'an Alertmanager webhook payload (version 4)');
    const groupLink = alertsUrl(group.externalURL, group.groupLabels);
    return {
      event: group.status,
      deliveryKey: alertDeliveryKey(group, input.receivedAt, hook.dedupSeconds),
      priority: alertPriority(group),
      notice: alertGroupNotice(group, {
        source: 'Alertmanager',
        timeZone: hook.timeZone,
        links: (alert) => {
          const url = alert.status === 'firing' ? silenceUrl(group.externalURL, alert.labels) : undefined;
          return url ? [{ text: 'Silence', url }] : [];
        },
        groupLinks: groupLink ? [{ text: 'Alertmanager', url: groupLink }] : [],
      }),
    };
  },
};
