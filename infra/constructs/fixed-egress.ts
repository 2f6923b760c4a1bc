import { RemovalPolicy, Tags } from 'aws-cdk-lib';
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
  /** Of the flow log group; the Elastic IP is always retained. */
  readonly removalPolicy: RemovalPolicy;
  /** Use this existing Elastic IP allocation (e.g. one a deleted stack retained) instead of allocating one. */
  readonly eipAllocationId?: string;
}

/**
 * A VPC whose only way out is one NAT gateway with an Elastic IP we own, for WeCom's 企业可信IP list
 * (apps created after 2022-06-20 must call the API from a trusted IP).
 *
 * Only the sender runs here (it is the only function calling WeCom); ingest stays outside the VPC and
 * its cold starts stay short. DynamoDB, the sender's hot path, goes through a free gateway endpoint.
 * SQS (deferral re-enqueues) and Secrets Manager (one config read per container a minute) go through the NAT: interface
 * endpoints would cost about USD 7/month per AZ each, more than the NAT data charges at gateway volumes.
 */
export class FixedEgress extends Construct {
  readonly vpc: Vpc;
  /** The Elastic IP the stack allocated; undefined when it reuses `eipAllocationId`. */
  readonly eip?: CfnEIP;
  readonly eipAllocationId: string;
  /** Where the sender's ENIs go. */
  readonly functionSubnets: SubnetSelection = { subnetType: SubnetType.PRIVATE_WITH_EGRESS };

  constructor(scope: Construct, id: string, props: FixedEgressProps) {
    super(scope, id);
    if (props.eipAllocationId) {
      this.eipAllocationId = props.eipAllocationId;
    } else {
      // Our own EIP (instead of one the NAT provider allocates) so its address can be a stack output and
      // stays the same when the NAT gateway is replaced.
      this.eip = new CfnEIP(this, 'NatEip', { domain: 'vpc' });
      Tags.of(this.eip).add('Name', 'wecom-gateway trusted egress IP');
      // Retained in every stage, whatever removes it (stack deletion, a deploy without fixed egress, a
      // replacement): the address sits on the trusted-IP list of every WeCom app the gateway serves, and a
      // released address is gone for good — each app's list would have to be edited by hand in the WeCom console.
      // A retained, unattached EIP costs its public-IPv4 charge until released (`aws ec2 release-address`);
      // `eipAllocationId` puts it back into a stack.
      this.eip.applyRemovalPolicy(RemovalPolicy.RETAIN);
      this.eipAllocationId = this.eip.attrAllocationId;
    }

    this.vpc = new Vpc(this, 'Vpc', {
      ipAddresses: IpAddresses.cidr('10.80.0.0/16'),
      maxAzs: 2,
      // One NAT gateway means one egress IP to register with WeCom; an AZ outage of that NAT pauses
      // sending (messages wait in SQS) rather than failing it.
      natGateways: 1,
      natGatewayProvider: NatProvider.gateway({ eipAllocationIds: [this.eipAllocationId] }),
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
