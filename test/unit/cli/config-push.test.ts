import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { type PushPlan, pushConfig } from '#cli/config-push.js';
import { AwsError } from '#cli/errors.js';
import { parseConfig } from '#lib/config/index.js';

const cfn = mockClient(CloudFormationClient);
const secrets = mockClient(SecretsManagerClient);
const clients = { cfn: new CloudFormationClient({}), secrets: new SecretsManagerClient({}) };

const doc = (apps: string[], keys: string[]) => ({
  apps: Object.fromEntries(apps.map((a) => [a, { corpId: 'ww1', agentId: 1000002, secret: `${a}-secret` }])),
  apiKeys: keys.map((name) => ({ name, sha256: 'a'.repeat(64), apps: [apps[0]] })),
});

const next = doc(['ops', 'alerts'], ['ci']);
const nextText = `${JSON.stringify(next, null, 2)}\n`;

function stackWithOutputs(outputs: { OutputKey: string; OutputValue: string }[]) {
  cfn.on(DescribeStacksCommand, { StackName: 'wecom-gateway-prod' }).resolves({
    Stacks: [
      {
        StackName: 'wecom-gateway-prod',
        CreationTime: new Date(),
        StackStatus: 'UPDATE_COMPLETE',
        Outputs: outputs,
      },
    ],
  });
}

const push = (confirm: (plan: PushPlan) => Promise<boolean> = async () => true) =>
  pushConfig(clients, { stage: 'prod', config: parseConfig(next), text: nextText, confirm });

describe('pushConfig', () => {
  beforeEach(() => {
    cfn.reset();
    secrets.reset();
    stackWithOutputs([
      { OutputKey: 'ApiUrl', OutputValue: 'https://x.execute-api.eu-west-1.amazonaws.com/' },
      { OutputKey: 'ConfigSecretName', OutputValue: 'wecom-gateway/prod/config' },
    ]);
    secrets
      .on(GetSecretValueCommand, { SecretId: 'wecom-gateway/prod/config' })
      .resolves({ SecretString: JSON.stringify(doc(['ops'], ['ci', 'old'])) });
    secrets.on(PutSecretValueCommand).resolves({ VersionId: 'v-2' });
  });

  it("finds the secret from the stack's ConfigSecretName output, shows the diff, then writes the file's text", async () => {
    const confirm = vi.fn(async (_plan: PushPlan) => true);

    const result = await push(confirm);

    expect(confirm).toHaveBeenCalledOnce();
    expect(confirm.mock.calls[0]?.[0]).toMatchObject({
      stack: 'wecom-gateway-prod',
      secretId: 'wecom-gateway/prod/config',
      diff: { apps: { added: ['alerts'], removed: [] }, apiKeys: { removed: ['old'] } },
    });
    expect(secrets.commandCalls(PutSecretValueCommand).map((c) => c.args[0].input)).toEqual([
      { SecretId: 'wecom-gateway/prod/config', SecretString: nextText },
    ]);
    expect(result).toMatchObject({ pushed: true, versionId: 'v-2' });
  });

  it('writes nothing when the operator declines', async () => {
    const result = await push(async () => false);

    expect(result).toMatchObject({ pushed: false, skipped: 'declined' });
    expect(secrets.commandCalls(PutSecretValueCommand)).toHaveLength(0);
  });

  it('neither asks nor writes when the stored config already is this one', async () => {
    secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify(next) });
    const confirm = vi.fn(async () => true);

    const result = await push(confirm);

    expect(result).toMatchObject({ pushed: false, skipped: 'no_changes' });
    expect(confirm).not.toHaveBeenCalled();
    expect(secrets.commandCalls(PutSecretValueCommand)).toHaveLength(0);
  });

  it('replaces a stored value that is no valid config, saying why it cannot diff field by field', async () => {
    secrets.on(GetSecretValueCommand).resolves({ SecretString: 'not json' });
    const confirm = vi.fn(async (_plan: PushPlan) => true);

    await push(confirm);

    expect(confirm.mock.calls[0]?.[0]).toMatchObject({
      currentProblem: 'it is not JSON',
      diff: { apps: { added: ['ops', 'alerts'] } },
    });
    expect(secrets.commandCalls(PutSecretValueCommand)).toHaveLength(1);
  });

  it('pushes to a secret that has no value yet', async () => {
    secrets
      .on(GetSecretValueCommand)
      .rejects(
        new ResourceNotFoundException({ message: "can't find the specified secret value", $metadata: {} }),
      );

    const result = await push();

    expect(result).toMatchObject({ pushed: true, currentProblem: 'it has no value yet' });
  });

  it('names a missing stack and a stack without the output, and reads no secret', async () => {
    cfn.reset();
    cfn.on(DescribeStacksCommand).rejects(
      Object.assign(new Error('Stack with id wecom-gateway-prod does not exist'), {
        name: 'ValidationError',
      }),
    );
    await expect(push()).rejects.toMatchObject({
      code: 'stack_not_found',
      message: /cdk deploy -c stage=prod/,
    });

    cfn.reset();
    stackWithOutputs([{ OutputKey: 'ApiUrl', OutputValue: 'https://x' }]);
    await expect(push()).rejects.toBeInstanceOf(AwsError);
    await expect(push()).rejects.toMatchObject({ code: 'stack_output_missing' });
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(0);
  });

  it('turns missing credentials and denied writes into operator-readable errors', async () => {
    cfn.reset();
    cfn.on(DescribeStacksCommand).rejects(
      Object.assign(new Error('Could not load credentials from any providers'), {
        name: 'CredentialsProviderError',
      }),
    );
    await expect(push()).rejects.toMatchObject({ code: 'aws_credentials', message: /--profile/ });

    stackWithOutputs([{ OutputKey: 'ConfigSecretName', OutputValue: 'wecom-gateway/prod/config' }]);
    secrets.on(PutSecretValueCommand).rejects(
      Object.assign(new Error('not authorized to perform: secretsmanager:PutSecretValue'), {
        name: 'AccessDeniedException',
      }),
    );
    await expect(push()).rejects.toMatchObject({ code: 'aws_access_denied' });
  });
});
