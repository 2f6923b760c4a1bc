import { type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
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
import { DEFAULT_ROUTE, ROUTES } from '#lib/resources/index.js';

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
  /** Stage-wide throttle: protects the ingest function and the queues from a runaway client. */
  readonly throttle: { readonly burstLimit: number; readonly rateLimit: number };
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

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

    // The routes of lib/resources, each to the function that serves it.
    const integrations = { ingest: new HttpLambdaIntegration('Ingest', props.ingest) };
    const routes = ROUTES.flatMap((route) =>
      this.api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: integrations[route.functionId],
      }),
    );
    // Whatever no route matches goes to a function too, which answers it in the gateway's error shape.
    routes.push(
      new HttpRoute(this, 'DefaultRoute', {
        httpApi: this.api,
        routeKey: HttpRouteKey.DEFAULT,
        integration: integrations[DEFAULT_ROUTE.functionId],
      }),
    );
    for (const route of routes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'Callers authenticate with gateway API keys (Authorization: Bearer) that the ingest function ' +
          'checks against SHA-256 hashes in the config secret and scopes per app (SPEC §2, §3); an API ' +
          'Gateway authorizer would add a second Lambda invocation per request for the same check.',
      });
    }
  }
}
