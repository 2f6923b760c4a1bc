import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { callsWecom, ENV, FUNCTIONS, type FunctionId } from '#lib/resources/index.js';
import { logicalId, SYNTH_TIMEOUT_MS, type SynthesizedGateway, synthGateway } from './synth.js';

/** The functions that call WeCom (lib/resources FUNCTION_ACCESS): every one must leave through the trusted IP. */
const WECOM_CALLERS = (Object.keys(FUNCTIONS) as FunctionId[]).filter(callsWecom);
const PROXY = 'https://wecom-proxy.example.com';

describe('Fixed egress IP (-c egress=fixed)', () => {
  let fixed: SynthesizedGateway;
  let standard: SynthesizedGateway;
  /** `cdk deploy -c stage=prod` with nothing else: fixed egress comes from the stages file alone. */
  let prodFromFile: SynthesizedGateway;
  let reused: SynthesizedGateway;
  const REUSED_ALLOCATION = 'eipalloc-0123456789abcdef0';
  beforeAll(() => {
    const stagesFile = path.join(mkdtempSync(path.join(tmpdir(), 'wecom-gateway-stages-')), 'stages.json');
    writeFileSync(stagesFile, JSON.stringify({ prod: { egress: 'fixed', wecomApiBase: PROXY } }));
    fixed = synthGateway({ egress: 'fixed' });
    standard = synthGateway();
    prodFromFile = synthGateway({ stage: 'prod', stagesFile });
    reused = synthGateway({ egress: 'fixed', eipAllocationId: REUSED_ALLOCATION });
  }, SYNTH_TIMEOUT_MS);

  const functionProps = (gateway: SynthesizedGateway, name: FunctionId) =>
    gateway.template.findResources('AWS::Lambda::Function')[logicalId(gateway, gateway.stack[name].fn)]
      ?.Properties;
  const variants = [
    ['dev + fixed', () => fixed],
    ['prod + fixed', () => prodFromFile],
  ] as const;

  it('counts both ingest (recall) and the sender among the WeCom callers', () => {
    expect(WECOM_CALLERS).toEqual(['ingest', 'sender']);
  });

  it.each(
    variants.flatMap(([variant, gateway]) => WECOM_CALLERS.map((fn) => [fn, variant, gateway] as const)),
  )('runs %s in the private subnets behind the NAT (%s)', (fn, _variant, gateway) => {
    const subnets = gateway().template.findResources('AWS::EC2::Subnet', {
      Properties: { Tags: Match.arrayWith([{ Key: 'aws-cdk:subnet-name', Value: 'private' }]) },
    });
    const vpcConfig = functionProps(gateway(), fn)?.VpcConfig as { SubnetIds: { Ref: string }[] } | undefined;
    expect(vpcConfig?.SubnetIds.map((s) => s.Ref).sort()).toEqual(Object.keys(subnets).sort());
  });

  it('puts every WeCom caller in one security group that admits no inbound traffic', () => {
    const groups = WECOM_CALLERS.map(
      (fn) =>
        (functionProps(fixed, fn)?.VpcConfig as { SecurityGroupIds?: unknown[] } | undefined)
          ?.SecurityGroupIds,
    );
    expect(new Set(groups.map((g) => JSON.stringify(g))).size).toBe(1);
    const [groupId] = (groups[0] as { 'Fn::GetAtt': [string, string] }[]).map((g) => g['Fn::GetAtt'][0]);
    const group = fixed.template.findResources('AWS::EC2::SecurityGroup')[groupId as string];
    expect(group?.Properties).not.toHaveProperty('SecurityGroupIngress');
  });

  it.each(WECOM_CALLERS)("hands %s the stage's WeCom base URL (prod + fixed, from the stages file)", (fn) => {
    const env = functionProps(prodFromFile, fn)?.Environment.Variables as Record<string, unknown>;
    expect(env[ENV.wecomApiBase]).toBe(PROXY);
  });

  it('egresses through a single NAT gateway using the Elastic IP output as WecomTrustedIp', () => {
    const [eipId] = Object.keys(fixed.template.findResources('AWS::EC2::EIP'));
    fixed.template.resourceCountIs('AWS::EC2::EIP', 1);
    fixed.template.resourceCountIs('AWS::EC2::NatGateway', 1);
    fixed.template.hasResourceProperties('AWS::EC2::NatGateway', {
      AllocationId: { 'Fn::GetAtt': [eipId, 'AllocationId'] },
    });
    fixed.template.hasOutput('WecomTrustedIp', { Value: { 'Fn::GetAtt': [eipId, 'PublicIp'] } });
  });

  it('takes fixed egress from the stages file when the deploy names only the stage', () => {
    prodFromFile.template.resourceCountIs('AWS::EC2::NatGateway', 1);
  });

  it.each(variants)('retains the Elastic IP whatever removes it (%s)', (_variant, gateway) => {
    gateway().template.hasResource('AWS::EC2::EIP', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it('outputs the allocation id, so a later stack can take the same IP back', () => {
    const [eipId] = Object.keys(fixed.template.findResources('AWS::EC2::EIP'));
    fixed.template.hasOutput('WecomTrustedIpAllocationId', {
      Value: { 'Fn::GetAtt': [eipId, 'AllocationId'] },
    });
  });

  it('reuses a retained Elastic IP given as eipAllocationId instead of allocating one', () => {
    reused.template.resourceCountIs('AWS::EC2::EIP', 0);
    reused.template.hasResourceProperties('AWS::EC2::NatGateway', { AllocationId: REUSED_ALLOCATION });
    reused.template.hasOutput('WecomTrustedIpAllocationId', { Value: REUSED_ALLOCATION });
  });

  it('reaches DynamoDB through a gateway endpoint', () => {
    fixed.template.hasResourceProperties('AWS::EC2::VPCEndpoint', { VpcEndpointType: 'Gateway' });
  });

  it('creates no VPC and no trusted-IP output by default', () => {
    standard.template.resourceCountIs('AWS::EC2::VPC', 0);
    expect(standard.template.findOutputs('WecomTrustedIp')).toEqual({});
  });

  it.each(Object.keys(FUNCTIONS) as FunctionId[])('keeps %s out of any VPC by default', (fn) => {
    expect(functionProps(standard, fn)).not.toHaveProperty('VpcConfig');
  });
});
