import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ROUTE } from '#lib/resources/index.js';
import { logicalId, SYNTH_TIMEOUT_MS, type SynthesizedGateway, synthGateway } from './synth.js';

describe('HTTP API', () => {
  let gateway: SynthesizedGateway;
  beforeAll(() => {
    gateway = synthGateway({ apiBurstLimit: '50', apiRateLimit: '25' });
  }, SYNTH_TIMEOUT_MS);

  it('routes the v1 endpoints and the catch-all, and only those: WeCom callbacks to the callback function, the rest to ingest', () => {
    const routes = Object.values(gateway.template.findResources('AWS::ApiGatewayV2::Route'));
    expect(routes.map((r) => r.Properties.RouteKey).sort()).toEqual([
      '$default',
      'DELETE /v1/messages/{id}',
      'GET /console',
      'GET /console/{proxy+}',
      'GET /v1/apps',
      'GET /v1/apps/{app}',
      'GET /v1/apps/{app}/reach',
      'GET /v1/dlq',
      'GET /v1/dlq/{id}',
      'GET /v1/events',
      'GET /v1/health',
      'GET /v1/messages',
      'GET /v1/messages/{id}',
      'GET /v1/messages/{id}/webhooks',
      'GET /v1/openapi.json',
      'GET /v1/push/{sendkey}',
      'GET /v1/robots',
      'GET /v1/robots/{robot}',
      'GET /v1/templates',
      'GET /v1/wecom/callback/{app}',
      'POST /v1/dlq/{id}/redrive',
      'POST /v1/hooks/{hook}/{token}',
      'POST /v1/messages',
      'POST /v1/messages/batch',
      'POST /v1/messages/{id}/card',
      'POST /v1/messages/{id}/recall',
      'POST /v1/push/{sendkey}',
      'POST /v1/wecom/callback/{app}',
    ]);
    const targetOf = (key: string) =>
      JSON.stringify(routes.find((r) => r.Properties.RouteKey === key)?.Properties.Target);
    const callback = new Set(
      routes
        .filter((r) => r.Properties.RouteKey.includes('/wecom/'))
        .map((r) => targetOf(r.Properties.RouteKey)),
    );
    const ingest = new Set(
      routes
        .filter((r) => !r.Properties.RouteKey.includes('/wecom/'))
        .map((r) => targetOf(r.Properties.RouteKey)),
    );
    expect([callback.size, ingest.size]).toEqual([1, 1]);
    expect([...callback]).not.toEqual([...ingest]);
    const integrations = gateway.template.findResources('AWS::ApiGatewayV2::Integration');
    const callbackIntegration = JSON.parse([...callback][0] as string)['Fn::Join'][1][1].Ref as string;
    expect(JSON.stringify(integrations[callbackIntegration]?.Properties.IntegrationUri)).toContain(
      logicalId(gateway, gateway.stack.callback.fn),
    );
  });

  it('serves the operator console from the ingest function, with no authorizer (the page holds no data)', () => {
    const routes = Object.values(gateway.template.findResources('AWS::ApiGatewayV2::Route'));
    const submit = routes.find((r) => r.Properties.RouteKey === 'POST /v1/messages');
    for (const key of ['GET /console', 'GET /console/{proxy+}']) {
      const route = routes.find((r) => r.Properties.RouteKey === key);
      expect(route?.Properties.Target).toEqual(submit?.Properties.Target);
      expect(route?.Properties.AuthorizationType ?? 'NONE').toBe('NONE');
    }
  });

  it("sends whatever no route matches to the ingest function ($default), not to API Gateway's own 404", () => {
    const routes = Object.values(gateway.template.findResources('AWS::ApiGatewayV2::Route'));
    const fallback = routes.find((r) => r.Properties.RouteKey === DEFAULT_ROUTE.routeKey);
    const submit = routes.find((r) => r.Properties.RouteKey === 'POST /v1/messages');
    expect(fallback?.Properties.Target).toEqual(submit?.Properties.Target);
  });

  it('throttles the default stage with the limits from context', () => {
    gateway.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: { ThrottlingBurstLimit: 50, ThrottlingRateLimit: 25 },
    });
  });

  it('throttles each hook and push route on its own below the stage, the callback routes above it, and no API route', () => {
    const [stage] = Object.values(gateway.template.findResources('AWS::ApiGatewayV2::Stage'));
    const inbound = { ThrottlingBurstLimit: 50, ThrottlingRateLimit: 10 };
    const callback = { ThrottlingBurstLimit: 1000, ThrottlingRateLimit: 500 };
    expect(stage?.Properties.RouteSettings).toEqual({
      'POST /v1/hooks/{hook}/{token}': inbound,
      'GET /v1/push/{sendkey}': inbound,
      'POST /v1/push/{sendkey}': inbound,
      'GET /v1/wecom/callback/{app}': callback,
      'POST /v1/wecom/callback/{app}': callback,
    });
    // Route settings naming a route the API does not have yet fail the deployment.
    const routeIds = Object.keys(gateway.template.findResources('AWS::ApiGatewayV2::Route'));
    for (const path of ['/v1/hooks/', '/v1/wecom/callback/']) {
      const route = routeIds.find((id) =>
        JSON.stringify(gateway.template.toJSON().Resources[id].Properties).includes(path),
      );
      expect(stage?.DependsOn).toContain(route);
    }
  });

  it('writes JSON access logs with request id, ip, route, status, latency and integration error', () => {
    const [stage] = Object.values(gateway.template.findResources('AWS::ApiGatewayV2::Stage'));
    const format = JSON.parse(stage?.Properties.AccessLogSettings.Format as string) as Record<string, string>;
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      ip: '$context.identity.sourceIp',
      routeKey: '$context.routeKey',
      status: '$context.status',
      latency: '$context.responseLatency',
      integrationErrorMessage: '$context.integrationErrorMessage',
    });
  });

  it('outputs the API URL without a trailing slash, so that $ApiUrl/v1/… and $ApiUrl/console are single-slashed', () => {
    const output = gateway.template.findOutputs('ApiUrl').ApiUrl;
    const [api] = Object.keys(gateway.template.findResources('AWS::ApiGatewayV2::Api'));
    // The Api's ApiEndpoint attribute is `https://abcdef.execute-api.us-west-2.amazonaws.com`, with no path
    // (AWS::ApiGatewayV2::Api return values); the `$default` stage's URL adds a `/`.
    expect(output?.Value).toEqual({ 'Fn::GetAtt': [api, 'ApiEndpoint'] });
  });
});

describe('HTTP API callback routes', () => {
  it(
    "gives WeCom's callback routes a throttle of their own, from context, above the stage's default",
    () => {
      const { template } = synthGateway({ callbackBurstLimit: '800', callbackRateLimit: '400' });
      const [stage] = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'));
      const limits = { ThrottlingBurstLimit: 800, ThrottlingRateLimit: 400 };
      expect(stage?.Properties.RouteSettings).toMatchObject({
        'GET /v1/wecom/callback/{app}': limits,
        'POST /v1/wecom/callback/{app}': limits,
      });
      // The businesses' routes keep the stage's throttle: no route settings of their own.
      expect(stage?.Properties.RouteSettings['POST /v1/messages']).toBeUndefined();
      expect(stage?.Properties.DefaultRouteSettings).toMatchObject({
        ThrottlingBurstLimit: 200,
        ThrottlingRateLimit: 100,
      });
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('HTTP API with dedicated hook routes', () => {
  it(
    'gives each hook named in context hookRoutes a route and a throttle of its own, with the limits from context',
    () => {
      const { template } = synthGateway({
        hookRoutes: 'prom,github',
        hookBurstLimit: '20',
        hookRateLimit: '5',
      });
      const keys = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map(
        (r) => r.Properties.RouteKey as string,
      );
      expect(keys).toEqual(
        expect.arrayContaining(['POST /v1/hooks/prom/{token}', 'POST /v1/hooks/github/{token}']),
      );
      const [stage] = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'));
      const limits = { ThrottlingBurstLimit: 20, ThrottlingRateLimit: 5 };
      expect(stage?.Properties.RouteSettings).toMatchObject({
        'POST /v1/hooks/prom/{token}': limits,
        'POST /v1/hooks/github/{token}': limits,
        'POST /v1/hooks/{hook}/{token}': limits,
      });
    },
    SYNTH_TIMEOUT_MS,
  );
});
