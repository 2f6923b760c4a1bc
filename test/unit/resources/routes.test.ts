import { describe, expect, it } from 'vitest';
import { dedicatedHookRoute, hookNameOf, ROUTES, routeKey, routeOf } from '#lib/resources/index.js';

describe('ROUTES', () => {
  it('has one route per method and path, and no API key on the hook and push routes', () => {
    const keys = ROUTES.map(routeKey);
    expect(new Set(keys).size).toBe(keys.length);
    const inbound = ROUTES.filter((r) => 'throttle' in r && r.throttle === 'inbound');
    expect(inbound.map(routeKey)).toEqual([
      'POST /v1/hooks/{hook}/{token}',
      'GET /v1/push/{sendkey}',
      'POST /v1/push/{sendkey}',
    ]);
    for (const r of inbound) expect(r.auth).toHaveProperty('urlToken');
  });
});

describe('dedicated hook routes', () => {
  it('are the hook route with the name in the path, found by their route key', () => {
    const route = dedicatedHookRoute('prom');

    expect(routeKey(route)).toBe('POST /v1/hooks/prom/{token}');
    expect(routeOf(routeKey(route))?.id).toBe('receiveHook');
    expect(hookNameOf({ routeKey: routeKey(route), pathParameters: { token: 't' } })).toBe('prom');
    expect(hookNameOf({ routeKey: 'POST /v1/hooks/{hook}/{token}', pathParameters: { hook: 'gh' } })).toBe(
      'gh',
    );
  });

  it('exist only for names config allows, and no other key resolves to the hook route', () => {
    expect(() => dedicatedHookRoute('bad name')).toThrow(RangeError);
    expect(routeOf('POST /v1/hooks/a/b/{token}')).toBeUndefined();
    expect(routeOf('GET /v1/hooks/prom/{token}')).toBeUndefined();
  });
});
