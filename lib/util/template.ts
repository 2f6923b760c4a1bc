import Mustache from 'mustache';

/**
 * Logic-less templates (mustache.js 4, https://github.com/janl/mustache.js) for the `generic` source and for any
 * hook's `template`. Dotted names reach into the payload, arrays by index: `{{alerts.0.labels.alertname}}`;
 * sections iterate: `{{#alerts}}- {{labels.alertname}}\n{{/alerts}}`. HTML escaping is off — the output is WeCom
 * markdown or text, where `&amp;` would show literally. Templates come from the operator's config, never from a
 * request; payload values are data and are never parsed as template syntax.
 */

const NO_ESCAPE = { escape: (value: unknown) => String(value) };

/** Returns a message naming the template error (an unclosed section, an unknown tag), or undefined if it parses. */
export function templateProblem(template: string): string | undefined {
  try {
    Mustache.parse(template);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * Renders a template against a parsed JSON payload.
 *
 * @example renderTemplate('{{alerts.0.labels.alertname}} is {{status}}', payload) // 'HighCPU is firing'
 */
export function renderTemplate(template: string, view: unknown): string {
  return Mustache.render(template, view, {}, NO_ESCAPE);
}
