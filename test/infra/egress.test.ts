import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { logicalId, SYNTH_TIMEOUT_MS, type SynthesizedGateway, synthGateway } from './synth.js';

describe('Fixed egress IP (-c egress=fixed)', () => {
  let fixed: SynthesizedGateway;
  let standard: SynthesizedGateway;
  /** `cdk deploy -c stage=prod` with nothing else: fixed egress comes from the stages file alone. */
  let prodFromFile: SynthesizedGateway;
  let reused: SynthesizedGateway;
  const REUSED_ALLOCATION = 'eipalloc-0123456789abcdef0';
  beforeAll(() => {
    const stagesFile = path.join(mkdtempSync(path.join(tmpdir(), 'wecom-gateway-stages-')), 'stages.json');
    writeFileSync(stagesFile, JSON.stringify({ prod: { egress: 'fixed' } }));
    fixed = synthGateway({ egress: 'fixed' });
    standard = synthGateway();
    prodFromFile = synthGateway({ stage: 'prod', stagesFile });
    reused = synthGateway({ egress: 'fixed', eipAllocationId: REUSED_ALLOCATION });
  }, SYNTH_TIMEOUT_MS);

  const functionProps = (gateway: SynthesizedGateway, name: 'ingest' | 'sender') =>
    gateway.template.findResources('AWS::Lambda::Function')[logicalId(gateway, gateway.stack[name].fn)]
      ?.Properties;

  it('runs the sender in the private subnets', () => {
    const subnets = fixed.template.findResources('AWS::EC2::Subnet', {
      Properties: { Tags: Match.arrayWith([{ Key: 'aws-cdk:subnet-name', Value: 'private' }]) },
    });
    const vpcConfig = functionProps(fixed, 'sender')?.VpcConfig as
      | { SubnetIds: { Ref: string }[] }
      | undefined;
    expect(vpcConfig?.SubnetIds.map((s) => s.Ref).sort()).toEqual(Object.keys(subnets).sort());
  });

  it('keeps ingest out of the VPC', () => {
    expect(functionProps(fixed, 'ingest')).not.toHaveProperty('VpcConfig');
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
    expect(functionProps(prodFromFile, 'sender')).toHaveProperty('VpcConfig');
  });

  it.each([
    ['dev + fixed', () => fixed],
    ['prod + fixed', () => prodFromFile],
  ])('retains the Elastic IP whatever removes it (%s)', (_variant, gateway) => {
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
    expect(functionProps(standard, 'sender')).not.toHaveProperty('VpcConfig');
    expect(standard.template.findOutputs('WecomTrustedIp')).toEqual({});
  });
});
