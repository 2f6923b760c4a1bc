import { type RemovalPolicy, Tags } from 'aws-cdk-lib';
import {
  CfnEIP,
  FlowLogDestination,
  FlowLogTrafficType,
  GatewayVpcEndpointAwsService,
  IpAddresses,
  NatProvider,
  type SubnetSelection,
  SubnetType,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

export interface FixedEgressProps {
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * A VPC whose only way out is one NAT gateway with an Elastic IP we own, for WeCom's 企业可信IP list
 * (apps created after 2022-06-20 must call the API from a trusted IP).
 *
 * Only the sender runs here (it is the only function calling WeCom); ingest stays outside the VPC and
 * its cold starts stay short. DynamoDB, the sender's hot path, goes through a free gateway endpoint.
 * SQS (deferral re-enqueues) and Secrets Manager (once per container) go through the NAT: interface
 * endpoints would cost about USD 7/month per AZ each, more than the NAT data charges at gateway volumes.
 */
export class FixedEgress extends Construct {
  readonly vpc: Vpc;
  readonly eip: CfnEIP;
  /** Where the sender's ENIs go. */
  readonly functionSubnets: SubnetSelection = { subnetType: SubnetType.PRIVATE_WITH_EGRESS };

  constructor(scope: Construct, id: string, props: FixedEgressProps) {
    super(scope, id);
    // Our own EIP (instead of one the NAT provider allocates) so its address can be a stack output and
    // stays the same when the NAT gateway is replaced.
    this.eip = new CfnEIP(this, 'NatEip', { domain: 'vpc' });
    Tags.of(this.eip).add('Name', 'wecom-gateway trusted egress IP');

    this.vpc = new Vpc(this, 'Vpc', {
      ipAddresses: IpAddresses.cidr('10.80.0.0/16'),
      maxAzs: 2,
      // One NAT gateway means one egress IP to register with WeCom; an AZ outage of that NAT pauses
      // sending (messages wait in SQS) rather than failing it.
      natGateways: 1,
      natGatewayProvider: NatProvider.gateway({ eipAllocationIds: [this.eip.attrAllocationId] }),
      subnetConfiguration: [
        { name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'private', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
      ],
      gatewayEndpoints: {
        DynamoDb: { service: GatewayVpcEndpointAwsService.DYNAMODB },
      },
    });

    // Rejected flows only: they are what an incident needs (and what AwsSolutions-VPC7 asks for) at a
    // fraction of the volume of ALL.
    this.vpc.addFlowLog('FlowLog', {
      trafficType: FlowLogTrafficType.REJECT,
      destination: FlowLogDestination.toCloudWatchLogs(
        new LogGroup(this, 'FlowLogs', { retention: props.logRetention, removalPolicy: props.removalPolicy }),
      ),
    });
  }
}
