import type { ApiKeyConfig } from '#lib/config/index.js';
import type { MsgType, TemplateVariable } from '#lib/messages/index.js';
import { authorizeApp } from './access.js';
import type { IngestDeps } from './types.js';

/** A template as `GET /v1/templates` shows it: what a caller needs to send it, not its body. */
export interface TemplateView {
  app: string;
  id: string;
  msgtype: MsgType;
  description: string | null;
  /** By name, as configured; `required` is always present. */
  variables: Record<string, TemplateVariable & { required: boolean }>;
}

/**
 * GET /v1/templates?app=: the templates of one app the key may use (403 for another app, the same answer whether
 * it exists or not, as `GET /v1/events`), or without `app` of every app it may use; ordered by app, then id.
 *
 * @example await listTemplates(deps, apiKey, { app: 'ops' }) // { templates: [{ app: 'ops', id: 'deploy_done', msgtype: 'template_card', … }] }
 */
export function listTemplates(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  query: Readonly<Record<string, string | undefined>>,
): { templates: TemplateView[] } {
  // `?app=` (empty) is no filter, as a form that leaves the field blank sends it.
  const app = query.app === '' ? undefined : query.app;
  if (app !== undefined) authorizeApp(apiKey, app);
  const apps = app !== undefined ? [app] : [...apiKey.apps].sort();
  const templates = apps.flatMap((name) => {
    const configured = Object.hasOwn(deps.config.apps, name) ? deps.config.apps[name]?.templates : undefined;
    return Object.entries(configured ?? {})
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(
        ([id, t]): TemplateView => ({
          app: name,
          id,
          msgtype: t.msgtype,
          description: t.description ?? null,
          variables: Object.fromEntries(
            Object.entries(t.variables ?? {}).map(([v, rules]) => [
              v,
              { ...rules, required: rules.required ?? false },
            ]),
          ),
        }),
      );
  });
  return { templates };
}
