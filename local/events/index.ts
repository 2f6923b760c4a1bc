export {
  buildHttpApiEvent,
  type HttpApiRequest,
  type HttpResponse,
  LOCAL_ACCOUNT_ID,
  LOCAL_API_ID,
  toHttpResponse,
} from './apigw-v2.js';
export { buildLambdaContext, type LambdaContextOptions } from './context.js';
export { buildSqsEvent } from './sqs.js';
