// Entry point of `cdk synth/deploy` (cdk.json "app"); parameters come from context, see infra/context.ts.
import { buildGatewayApp } from './build-app.js';

buildGatewayApp();
