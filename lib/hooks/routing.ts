import type { HookRule, RecipientsConfig } from '#lib/config/index.js';
import { type Priority, parseRecipients, type Recipients } from '#lib/messages/index.js';

/**
 * Routing by content. Each rule's `match` maps keys to expected values; a key is a dotted path into the vendor's
 * JSON payload (`commonLabels.team`, `repository.full_name`, `alerts.0.labels.severity`) or `$event`, the event the
 * source read (`firing`, `push`, `pull_request.merged`, `issue.created`). A rule matches when every entry holds:
 * the value at the path (strings as they are, numbers and booleans as text) equals the string, is one of the
 * array, or matches the whole `regex`.
 *
 * Rules are not "first match wins": every matching rule applies, in order, until one with `stop: true`. So
 * `team=db → tag 7` and `severity=critical → high` both apply to a critical db alert. Their effects combine:
 * - recipients: the union of the matching rules' `to`, replacing the hook's `to`; the hook's `to` when no
 *   matching rule has one;
 * - priority: `high` if any matching rule says high, else `normal` if one says normal; the hook's `priority`,
 *   then the source's (alert severity), then normal when no rule sets one;
 * - `ignore: true` on any matching rule: the delivery is accepted and nothing is sent.
 */

export interface RouteDecision {
  /** Indexes of the rules that applied. */
  matched: number[];
  recipients?: Recipients;
  priority?: Priority;
  ignore: boolean;
}

const regexCache = new Map<string, RegExp>();
const wholeMatch = (pattern: string): RegExp => {
  let re = regexCache.get(pattern);
  if (!re) {
    re = new RegExp(`^(?:${pattern})$`, 'u');
    regexCache.set(pattern, re);
  }
  return re;
};

/** The value at a dotted path, through own properties only (never `constructor` or `__proto__`). */
export function valueAt(payload: unknown, path: string): unknown {
  let current: unknown = payload;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

const asText = (value: unknown): string | undefined =>
  typeof value === 'string'
    ? value
    : typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : undefined;

function holds(expected: HookRule['match'][string], actual: string | undefined): boolean {
  if (actual === undefined) return false;
  if (typeof expected === 'string') return actual === expected;
  if (Array.isArray(expected)) return expected.includes(actual);
  return wholeMatch(expected.regex).test(actual);
}

export function ruleMatches(rule: HookRule, payload: unknown, event: string): boolean {
  return Object.entries(rule.match).every(([key, expected]) =>
    holds(expected, key === '$event' ? event : asText(valueAt(payload, key))),
  );
}

export const toRecipients = (to: RecipientsConfig): Recipients => parseRecipients(to).recipients;

function union(into: Recipients, more: Recipients): void {
  for (const kind of ['touser', 'toparty', 'totag'] as const) {
    for (const id of more[kind]) if (!into[kind].includes(id)) into[kind].push(id);
  }
}

/**
 * Applies a hook's rules to one delivery.
 *
 * @example routeDelivery([{ match: { 'commonLabels.team': 'db' }, to: { totag: '7' } }], payload, 'firing')
 */
export function routeDelivery(rules: readonly HookRule[], payload: unknown, event: string): RouteDecision {
  const decision: RouteDecision = { matched: [], ignore: false };
  for (const [index, rule] of rules.entries()) {
    if (!ruleMatches(rule, payload, event)) continue;
    decision.matched.push(index);
    if (rule.to) {
      decision.recipients ??= { touser: [], toparty: [], totag: [] };
      union(decision.recipients, toRecipients(rule.to));
    }
    if (rule.priority === 'high' || (rule.priority === 'normal' && decision.priority === undefined)) {
      decision.priority = rule.priority;
    }
    if (rule.ignore) decision.ignore = true;
    if (rule.stop) break;
  }
  return decision;
}
