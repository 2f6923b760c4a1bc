import { RemovalPolicy, Tags } from 'aws-cdk-lib';
import {
  CfnEIP,
  FlowLogDestination,
  FlowLogTrafficType,
  GatewayVpcEndpointAwsService,
  IpAddresses,
  NatProvider,
  SecurityGroup,
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
 * Every function that calls WeCom runs here (lib/resources `FUNCTION_ACCESS[id].wecom`: the sender's sends,
 * ingest's recalls and their gettoken), so no WeCom call leaves from another address. Lambda creates a VPC
 * function's network interfaces when the function is created or its VPC settings change, not on a cold start
 * (https://aws.amazon.com/blogs/compute/announcing-improved-vpc-networking-for-aws-lambda-functions/), so ingest
 * keeps its cold start; the WeCom callers share one security group and so one interface per subnet. A function
 * left uninvoked for weeks goes Inactive and its next invocation fails while Lambda recreates the interface
 * (https://docs.aws.amazon.com/lambda/latest/dg/functions-states.html).
 *
 * DynamoDB, on every request's and every send's path, goes through a free gateway endpoint. SQS (ingest's
 * enqueue, the sender's deferrals) and Secrets Manager (one config read per container a minute) go through the
 * NAT: an interface endpoint costs about USD 0.01 per hour per AZ, some USD 15 a month per service for the two
 * AZs (https://aws.amazon.com/privatelink/pricing/), while the NAT charges about USD 0.045 per GB processed
 * (https://aws.amazon.com/vpc/pricing/) and a message is a few KB: well under a dollar a month per million
 * messages. The price of that choice: while the NAT's AZ is down, ingest answers 503 (nothing accepted; clients
 * retry) and sending pauses, as it would anyway without the trusted IP.
 */
export class FixedEgress extends Construct {
  readonly vpc: Vpc;
  /** The Elastic IP the stack allocated; undefined when it reuses `eipAllocationId`. */
  readonly eip?: CfnEIP;
  readonly eipAllocationId: string;
  /** Where the WeCom callers' network interfaces go. */
  readonly functionSubnets: SubnetSelection = { subnetType: SubnetType.PRIVATE_WITH_EGRESS };
  /** Shared by every WeCom caller: no inbound rule; Lambda shares one interface per subnet and group. */
  readonly functionSecurityGroup: SecurityGroup;

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
      // sending (messages wait in SQS) rather than failing it, and ingest answers 503 meanwhile.
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

    this.functionSecurityGroup = new SecurityGroup(this, 'WecomCallers', {
      vpc: this.vpc,
      description:
        'wecom-gateway functions that call WeCom: no inbound; out through the NAT or the DynamoDB endpoint',
      // Outbound to anywhere: WeCom (or the wecomApiBase proxy, on its own port) and the AWS APIs.
      allowAllOutbound: true,
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
