import { randomBytes } from 'node:crypto';

export const INIT_STAGES = ['local', 'dev', 'prod'] as const;
export type InitStage = (typeof INIT_STAGES)[number];

/** Values `config init` leaves for the operator; `config check` and `doctor` warn while one is still there. */
export const PLACEHOLDER = 'FILL_IN';

/** Paths (dotted) of string values in a document that still hold a `config init` placeholder. */
export function placeholdersIn(value: unknown, prefix = ''): string[] {
  if (typeof value === 'string') return value.startsWith(PLACEHOLDER) ? [prefix] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => placeholdersIn(v, `${prefix}.${i}`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) =>
      k === '$comment' ? [] : placeholdersIn(v, prefix ? `${prefix}.${k}` : k),
    );
  }
  return [];
}

/**
 * A starting config for a stage. JSON has no comments and the loader reads plain JSON, so the guidance goes into
 * the top-level `$comment` the schema allows (and the gateway ignores). `local` works at once against the
 * simulator (any corpId and secret do); `dev` and `prod` hold placeholders that `config check` points out.
 */
export function initialConfig(stage: InitStage, today: string): Record<string, unknown> {
  const local = stage === 'local';
  return {
    $comment: [
      `wecom-gateway config for stage ${stage}, written by \`wecom-gateway config init\` on ${today}. The gateway ignores this $comment.`,
      local
        ? 'apps.ops talks to the local WeCom simulator: any corpId and secret work. Start with: GATEWAY_CONFIG=<this file> npm start'
        : 'Fill in apps.ops: corpId (WeCom admin console: 我的企业 > 企业信息 > 企业ID), agentId and secret (应用管理 > your app > AgentId, Secret).',
      'API keys: `wecom-gateway keys create --app ops --name ci --file <this file>` prints a key once and adds its entry (only a SHA-256) to apiKeys.',
      'Webhooks from Alertmanager, Grafana, GitHub…: `wecom-gateway hooks create --source alertmanager --app ops --to <userid> --file <this file>`; one-URL push: `wecom-gateway push-keys create`.',
      'apps.ops.markdownFallback "text": markdown is not shown in the WeChat plugin (微信插件), so it is sent as text; remove it if everyone reads in the WeCom app.',
      local
        ? 'allowLoopbackWebhooks lets webhooks reach 127.0.0.1: for the local stack only (config push refuses it).'
        : `Check with \`wecom-gateway config check --file <this file>\`, store with \`wecom-gateway config push --stage ${stage} --file <this file>\`, then run \`wecom-gateway doctor --stage ${stage}\`.`,
      'Every field: docs/reference/configuration.md.',
    ],
    apps: {
      ops: {
        corpId: local ? 'wwlocal000000000001' : `${PLACEHOLDER}_corpId`,
        agentId: 1000002,
        secret: local ? randomBytes(24).toString('base64url') : `${PLACEHOLDER}_secret`,
        markdownFallback: 'text',
      },
    },
    apiKeys: [],
    ...(local ? { allowLoopbackWebhooks: true } : {}),
  };
}
