import { type RemovalPolicy, SecretValue, Validations } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/**
 * Initial value: the shape of the config (SPEC §3) with no apps and no API keys, so the gateway starts
 * and answers 401 until the operator stores the real config. It holds nothing secret, so it may sit in
 * the template. CloudFormation rewrites SecretString only when this value changes in the template, so
 * redeploys never overwrite the config the operator put — keep it constant.
 */
export const PLACEHOLDER_CONFIG = JSON.stringify({ apps: {}, apiKeys: [] });

export interface ConfigSecretProps {
  readonly stage: string;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The gateway config JSON in Secrets Manager. Set it after the first deploy:
 * `aws secretsmanager put-secret-value --secret-id wecom-gateway/<stage>/config --secret-string file://config.json`.
 */
export class ConfigSecret extends Construct {
  readonly secret: Secret;
  /** A fixed, readable name, so operators can address it in put-secret-value without a stack lookup. */
  readonly secretName: string;

  constructor(scope: Construct, id: string, props: ConfigSecretProps) {
    super(scope, id);
    this.secretName = `wecom-gateway/${props.stage}/config`;
    this.secret = new Secret(this, 'Secret', {
      secretName: this.secretName,
      description: 'wecom-gateway config JSON (apps, WeCom secrets, API key hashes); see SPEC §3',
      secretStringValue: SecretValue.unsafePlainText(PLACEHOLDER_CONFIG),
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The secret holds WeCom app secrets and callback keys, which are rotated in the WeCom admin console ' +
        'and then pasted here; there is no API a rotation Lambda could call to rotate them.',
    });
  }
}
