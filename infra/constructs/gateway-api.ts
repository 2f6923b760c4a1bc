import { type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  type CfnStage,
  HttpApi,
  HttpMethod,
  HttpRoute,
  HttpRouteKey,
  type HttpStage,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  DEFAULT_ROUTE,
  dedicatedHookRoute,
  ROUTES,
  type RouteDefinition,
  routeKey,
  WEB_ROUTES,
} from '#lib/resources/index.js';

/**
 * One JSON object per request. HTTP API access logs support only $context variables
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-logging-variables.html);
 * integrationErrorMessage is what tells a Lambda crash apart from a 5xx the function returned.
 */
const ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTimeEpoch',
  routeKey: '$context.routeKey',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  latency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationErrorMessage: '$context.integrationErrorMessage',
});

export interface GatewayApiProps {
  readonly ingest: IFunction;
  /** Serves WeCom's callbacks (`/v1/wecom/callback/{app}`). */
  readonly callback: IFunction;
  /** Stage-wide throttle: protects the ingest function and the queues from a runaway client. */
  readonly throttle: Throttle;
  /** Route-level throttle of each route for other systems' deliveries (`throttle: 'inbound'`: hooks, push). */
  readonly inboundThrottle: Throttle;
  /** Route-level throttle of WeCom's callback routes (`throttle: 'callback'`). */
  readonly callbackThrottle: Throttle;
  /** Hooks that get a route of their own (`POST /v1/hooks/<name>/{token}`), and with it their own throttle. */
  readonly dedicatedHooks?: readonly string[];
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

interface Throttle {
  readonly burstLimit: number;
  readonly rateLimit: number;
}

const NAG_REASON: Record<'apiKey' | 'urlToken' | 'signed' | 'public', string> = {
  apiKey:
    'Callers authenticate with gateway API keys (Authorization: Bearer) that the ingest function ' +
    'checks against SHA-256 hashes in the config secret and scopes per app (SPEC §2, §3); an API ' +
    'Gateway authorizer would add a second Lambda invocation per request for the same check.',
  urlToken:
    'SaaS webhooks and push senders cannot set an Authorization header: the token in the URL is checked by ' +
    'the ingest function against a SHA-256 hash in the config secret, scoped to one hook or push key, in ' +
    'constant time; the route has a throttle of its own.',
  signed:
    'WeCom cannot send an API key: it signs each callback (msg_signature = SHA-1 over the app token, ' +
    'timestamp, nonce and ciphertext, path/90968), and the callback function checks that signature in ' +
    'constant time, the timestamp and the corp before anything is stored (lib/callback).',
  public:
    'Public by design and reveals nothing secret: the health check ({"status":"ok"}), the OpenAPI document ' +
    "(the routes are documented anyway), the operator console's static page and files (they hold no data; " +
    'the page asks for an API key and calls the API with it) and the catch-all 404 for unknown paths.',
};

const nagReason = (route: RouteDefinition): string => {
  if (route.functionId === 'callback') return NAG_REASON.signed;
  if (route.auth === 'none') return NAG_REASON.public;
  return 'scope' in route.auth ? NAG_REASON.apiKey : NAG_REASON.urlToken;
};

export class GatewayApi extends Construct {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogGroup: LogGroup;

  constructor(scope: Construct, id: string, props: GatewayApiProps) {
    super(scope, id);
    this.accessLogGroup = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });

    // The default stage that HttpApi would create takes neither throttling nor access logs, so we create
    // the `$default` stage ourselves (served at the API root, auto-deployed).
    this.api = new HttpApi(this, 'HttpApi', {
      description: 'wecom-gateway public API (v1)',
      createDefaultStage: false,
    });
    this.stage = this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: { burstLimit: props.throttle.burstLimit, rateLimit: props.throttle.rateLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogGroup),
        format: AccessLogFormat.custom(ACCESS_LOG_FORMAT),
      },
    });

    // The routes of lib/resources, each to the function that serves it, plus a route per dedicated hook.
    const integrations = {
      ingest: new HttpLambdaIntegration('Ingest', props.ingest),
      callback: new HttpLambdaIntegration('Callback', props.callback),
    };
    const routes = [...ROUTES, ...WEB_ROUTES, ...(props.dedicatedHooks ?? []).map(dedicatedHookRoute)];
    // RouteSettings is a JSON map in CloudFormation (route key → settings): CDK passes it through as written, so
    // its keys are CloudFormation's PascalCase, not the camelCase of CfnStage.RouteSettingsProperty.
    const routeSettings: Record<string, { ThrottlingBurstLimit: number; ThrottlingRateLimit: number }> = {};
    const cfnStage = this.stage.node.defaultChild as CfnStage;
    for (const route of routes) {
      const [created] = this.api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: integrations[route.functionId],
      });
      if (!created) continue;
      Validations.of(created).acknowledge({ id: 'AwsSolutions-APIG4', reason: nagReason(route) });
      // A route's settings replace the stage's defaults for it, above or below them
      // (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-throttling.html).
      if ('throttle' in route) {
        const throttle = route.throttle === 'inbound' ? props.inboundThrottle : props.callbackThrottle;
        routeSettings[routeKey(route)] = {
          ThrottlingBurstLimit: throttle.burstLimit,
          ThrottlingRateLimit: throttle.rateLimit,
        };
        // CloudFormation rejects route settings for a route key the API does not have yet.
        cfnStage.node.addDependency(created);
      }
    }
    cfnStage.routeSettings = routeSettings;
    // Whatever no route matches goes to a function too, which answers it in the gateway's error shape.
    const defaultRoute = new HttpRoute(this, 'DefaultRoute', {
      httpApi: this.api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: integrations[DEFAULT_ROUTE.functionId],
    });
    Validations.of(defaultRoute).acknowledge({ id: 'AwsSolutions-APIG4', reason: NAG_REASON.public });
  }
}
