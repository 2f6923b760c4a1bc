import { join } from 'node:path';
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { QueueAttributeName, SQSClient } from '@aws-sdk/client-sqs';
import { deadLetterQueueOf, LANES, QUEUES, type QueueId, STACK_OUTPUTS } from '#lib/resources/index.js';
import { readStackInfo } from '#local/local-dir.js';
import { AwsError, UsageError } from './errors.js';
import { PACKED } from './packaging.js';

/** Where the gateway's table and queues are: `--stage` for a deployed stack, else the `npm start` in this directory. */
export interface StackFlags {
  stage?: string;
  region?: string;
  profile?: string;
}

/** The table and queues of one gateway stack, and the SDK settings that reach them. */
export interface StackLocation {
  /** For messages: `local stack (npm start)` or `stack wecom-gateway-prod`. */
  where: string;
  tableName: string;
  queueUrls: Record<QueueId, string>;
  /** The stack's API, when it says. */
  apiUrl?: string;
  /** SDK client settings: the emulators' endpoints and dummy credentials locally; region/profile on AWS. */
  clientConfig: {
    region?: string;
    profile?: string;
    endpoints?: { sqs: string; dynamodb: string };
    credentials?: { accessKeyId: string; secretAccessKey: string };
  };
}

/** The CDK app's rule for stage names (infra/context.ts). */
export const STAGE = /^[a-z][a-z0-9-]{0,19}$/;

/**
 * Finds the stack: with `--stage`, from the deployed stack's outputs (TableName, QueueUrl…); otherwise from the
 * `.local/stack.json` a running `npm start` wrote in `cwd`.
 */
export async function locateStack(flags: StackFlags, cwd: string): Promise<StackLocation> {
  if (flags.stage !== undefined) return locateDeployed(flags);
  if (flags.region || flags.profile) throw new UsageError('--region and --profile need --stage');
  const info = await readStackInfo(join(cwd, '.local'));
  if (!info) {
    throw new UsageError(
      PACKED
        ? `no local stack running in ${cwd} (.local/stack.json): run this in a wecom-gateway checkout where \`npm start\` runs (the packed CLI cannot start one), or pass --stage for a deployed stack`
        : `no local stack running in ${cwd} (.local/stack.json): start one with \`npm start\` there, or pass --stage for a deployed stack`,
    );
  }
  if (!info.aws) {
    throw new UsageError(
      'the running `npm start` does not publish its queues (.local/stack.json has no "aws"): restart it with this version',
    );
  }
  return {
    where: 'local stack (npm start)',
    tableName: info.aws.tableName,
    queueUrls: pickQueueUrls(info.aws.queueUrls, (id) => `.local/stack.json has no URL for queue ${id}`),
    apiUrl: info.apiUrl,
    clientConfig: {
      region: info.aws.region,
      endpoints: { sqs: info.aws.sqsEndpoint, dynamodb: info.aws.dynamoEndpoint },
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    },
  };
}

async function locateDeployed(flags: StackFlags): Promise<StackLocation> {
  const stage = flags.stage as string;
  if (!STAGE.test(stage)) {
    throw new UsageError(`--stage must match ${STAGE} (the CDK app's rule), got ${JSON.stringify(stage)}`);
  }
  const clientConfig = {
    ...(flags.region ? { region: flags.region } : {}),
    ...(flags.profile ? { profile: flags.profile } : {}),
  };
  // Loaded here so that commands without --stage never pay for the AWS SDK's CloudFormation client.
  const [{ CloudFormationClient }, { stackName, stackOutputs }] = await Promise.all([
    import('@aws-sdk/client-cloudformation'),
    import('./config-push.js'),
  ]);
  const cfn: Pick<CloudFormationClient, 'send' | 'destroy'> = new CloudFormationClient(clientConfig);
  try {
    const outputs = await stackOutputs(cfn, stage);
    const missing = (name: string) =>
      `stack ${stackName(stage)} has no ${name} output (deployed by an older version? run \`npx cdk deploy -c stage=${stage}\` again)`;
    const tableName = outputs[STACK_OUTPUTS.tableName];
    if (!tableName) throw new AwsError('stack_output_missing', missing(STACK_OUTPUTS.tableName));
    const byOutput = Object.fromEntries(
      (Object.keys(QUEUES) as QueueId[]).map((id) => [id, outputs[STACK_OUTPUTS.queueUrl(id)]]),
    );
    return {
      where: `stack ${stackName(stage)}`,
      tableName,
      queueUrls: pickQueueUrls(byOutput, (id) => missing(STACK_OUTPUTS.queueUrl(id))),
      ...(outputs.ApiUrl ? { apiUrl: outputs.ApiUrl.replace(/\/+$/, '') } : {}),
      clientConfig,
    };
  } finally {
    cfn.destroy();
  }
}

function pickQueueUrls(
  urls: Record<string, string | undefined>,
  missing: (id: QueueId) => string,
): Record<QueueId, string> {
  const out = {} as Record<QueueId, string>;
  for (const id of Object.keys(QUEUES) as QueueId[]) {
    const url = urls[id];
    if (!url) throw new AwsError('stack_output_missing', missing(id));
    out[id] = url;
  }
  return out;
}

/** SDK clients for the stack's queues and table, loaded only by the commands that use them. */
export async function openClients(loc: StackLocation) {
  const [{ SQSClient }, { DynamoDBClient }, { DynamoDBDocumentClient }] = await Promise.all([
    import('@aws-sdk/client-sqs'),
    import('@aws-sdk/client-dynamodb'),
    import('@aws-sdk/lib-dynamodb'),
  ]);
  const { endpoints, ...common } = loc.clientConfig;
  const sqs = new SQSClient({ ...common, ...(endpoints ? { endpoint: endpoints.sqs } : {}) });
  const dynamo = new DynamoDBClient({ ...common, ...(endpoints ? { endpoint: endpoints.dynamodb } : {}) });
  const doc = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  return {
    sqs,
    doc,
    close: () => {
      sqs.destroy();
      dynamo.destroy();
    },
  };
}

/** A lane's depth: waiting, being handled (in flight), delayed (deferred copies), and in its dead-letter queue. */
export interface LaneDepth {
  lane: string;
  waiting: number;
  inFlight: number;
  delayed: number;
  dead: number;
}

/** Queue depths from SQS's approximate counters (GetQueueAttributes), one row per lane. */
export async function readLaneDepths(sqs: Pick<SQSClient, 'send'>, loc: StackLocation): Promise<LaneDepth[]> {
  const { GetQueueAttributesCommand } = await import('@aws-sdk/client-sqs');
  const counts = async (url: string) => {
    const out = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
          'ApproximateNumberOfMessagesDelayed',
        ],
      }),
    );
    const n = (name: QueueAttributeName) => Number(out.Attributes?.[name] ?? 0);
    return {
      visible: n('ApproximateNumberOfMessages'),
      inFlight: n('ApproximateNumberOfMessagesNotVisible'),
      delayed: n('ApproximateNumberOfMessagesDelayed'),
    };
  };
  return Promise.all(
    LANES.map(async (lane) => {
      const [main, dlq] = await Promise.all([
        counts(loc.queueUrls[lane]),
        counts(loc.queueUrls[deadLetterQueueOf(lane)]),
      ]);
      return {
        lane,
        waiting: main.visible,
        inFlight: main.inFlight,
        delayed: main.delayed,
        dead: dlq.visible + dlq.inFlight + dlq.delayed,
      };
    }),
  );
}
