// Entry point of `cdk synth/deploy` (cdk.json "app"); parameters come from infra/stages.json and context, see
// infra/context.ts.
import { buildGatewayApp } from './build-app.js';
import { ContextError } from './context.js';

try {
  buildGatewayApp();
} catch (err) {
  // A bad or refused setting: the message says what and how to fix it; a stack trace would only bury it.
  if (!(err instanceof ContextError)) throw err;
  process.stderr.write(`wecom-gateway: ${err.message}\n`);
  process.exit(1);
}
