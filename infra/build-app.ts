import { App, type AppProps, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readGatewayContext } from './context.js';
import { GatewayStack } from './gateway-stack.js';

export interface GatewayApp {
  readonly app: App;
  readonly stack: GatewayStack;
}

/**
 * Builds the CDK app: one GatewayStack per stage, checked by cdk-nag's AwsSolutions pack during synth.
 * cdk-nag 3 is a validation plugin: any unacknowledged finding fails synth. Acknowledgements sit next to
 * the construct they concern, each with its reason.
 */
export function buildGatewayApp(props: AppProps = {}): GatewayApp {
  const app = new App(props);
  const gateway = readGatewayContext(app);
  const stack = new GatewayStack(app, `wecom-gateway-${gateway.stage}`, {
    description: `wecom-gateway (${gateway.stage}): WeCom application message push gateway`,
    gateway,
  });
  Tags.of(app).add('project', 'wecom-gateway');
  Tags.of(app).add('stage', gateway.stage);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack };
}
