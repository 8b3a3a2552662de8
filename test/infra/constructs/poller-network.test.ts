/**
 * The function in a VPC: its subnets and security groups, the opt-in VPC endpoints and the one
 * security group that admits the function to them, the output naming the NAT gateways' public
 * addresses, reserved concurrency, the claim-check bucket's access logs, and the props refused
 * without a VPC.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { BankingEventsPoller, type BankingEventsPollerProps } from '../../../infra/constructs/index.ts';
import { cdkJsonContext, logicalIdOf } from '../support/poller-app-fixture.ts';

type Json = Record<string, unknown>;

function newStack(): Stack {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  return new Stack(app, 'Host', { env: { account: '123456789012', region: 'eu-west-1' } });
}

function vpcIn(stack: Stack): ec2.Vpc {
  return new ec2.Vpc(stack, 'Vpc', {
    maxAzs: 2,
    natGateways: 2,
    subnetConfiguration: [
      { name: 'Public', subnetType: ec2.SubnetType.PUBLIC },
      { name: 'Private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      { name: 'Isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
    ],
  });
}

const ref = (stack: Stack, construct: { node: { defaultChild?: unknown } }) => ({
  Ref: logicalIdOf(stack, construct),
});

describe('a function in a VPC with endpoints', () => {
  let stack: Stack;
  let vpc: ec2.Vpc;
  let poller: BankingEventsPoller;
  let template: Template;
  let functionSecurityGroup: Json;

  beforeAll(() => {
    stack = newStack();
    vpc = vpcIn(stack);
    poller = new BankingEventsPoller(stack, 'Poller', {
      programs: [{ name: 'cards' }, { name: 'loans' }],
      vpc,
      vpcEndpoints: true,
      reservedConcurrency: 4,
    });
    template = Template.fromStack(stack);
    const [securityGroup] = poller.pollerFunction.connections.securityGroups;
    functionSecurityGroup = { 'Fn::GetAtt': [logicalIdOf(stack, securityGroup as never), 'GroupId'] };
  });

  it('runs in the private subnets with egress, with its own security group, and reserved concurrency', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      VpcConfig: {
        SubnetIds: vpc.privateSubnets.map((subnet) => ref(stack, subnet as never)),
        SecurityGroupIds: [functionSecurityGroup],
      },
      ReservedConcurrentExecutions: 4,
    });
  });

  it('adds gateway endpoints for DynamoDB and S3 on the route tables of those subnets', () => {
    const routeTables = vpc.privateSubnets.map((subnet) => stack.resolve(subnet.routeTable.routeTableId));
    for (const service of ['dynamodb', 's3']) {
      template.hasResourceProperties('AWS::EC2::VPCEndpoint', {
        VpcEndpointType: 'Gateway',
        ServiceName: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([`.${service}`])] }),
        RouteTableIds: Match.arrayEquals(routeTables),
      });
    }
  });

  it('adds interface endpoints for Secrets Manager and EventBridge, private DNS, in those subnets', () => {
    const endpointGroup = {
      'Fn::GetAtt': [logicalIdOf(stack, poller.vpcEndpoints!.securityGroup), 'GroupId'],
    };
    for (const service of ['secretsmanager', 'events']) {
      template.hasResourceProperties('AWS::EC2::VPCEndpoint', {
        VpcEndpointType: 'Interface',
        ServiceName: `com.amazonaws.eu-west-1.${service}`,
        PrivateDnsEnabled: true,
        SubnetIds: vpc.privateSubnets.map((subnet) => ref(stack, subnet as never)),
        SecurityGroupIds: [endpointGroup],
      });
    }
    // Nothing else: Lambda ships logs and EMF metrics outside the VPC, and only the services call KMS.
    expect(Object.keys(template.findResources('AWS::EC2::VPCEndpoint'))).toHaveLength(4);
  });

  it('admits the function alone to the endpoints, on 443, and lets them send nothing out', () => {
    const endpointGroupId = logicalIdOf(stack, poller.vpcEndpoints!.securityGroup);
    const ingress = [
      ...Object.values(template.findResources('AWS::EC2::SecurityGroupIngress')).map(
        (rule) => (rule as { Properties: Json }).Properties,
      ),
      ...(((template.toJSON().Resources[endpointGroupId] as { Properties: Json }).Properties
        .SecurityGroupIngress as Json[] | undefined) ?? []),
    ];
    expect(ingress).toEqual([
      {
        IpProtocol: 'tcp',
        FromPort: 443,
        ToPort: 443,
        Description: 'HTTPS from the banking events poller function',
        GroupId: { 'Fn::GetAtt': [endpointGroupId, 'GroupId'] },
        SourceSecurityGroupId: functionSecurityGroup,
      },
    ]);
    template.hasResourceProperties('AWS::EC2::SecurityGroup', {
      GroupDescription: Match.stringLikeRegexp('VPC endpoints'),
      SecurityGroupEgress: [Match.objectLike({ CidrIp: '255.255.255.255/32' })],
    });
  });

  it("outputs the NAT gateways' Elastic IPs: the addresses to allowlist", () => {
    const outputs = template.findOutputs('*', { Description: Match.stringLikeRegexp('allowlist') });
    const eips = Object.keys(template.findResources('AWS::EC2::EIP'));

    expect(eips).toHaveLength(2);
    expect(Object.values(outputs)).toEqual([
      expect.objectContaining({
        Value: { 'Fn::Join': [',', eips.map((eip) => ({ 'Fn::GetAtt': [eip, 'PublicIp'] }))] },
      }),
    ]);
    expect(poller.egressPublicIps).toHaveLength(2);
  });
});

describe('a function in a VPC the app imports', () => {
  it('runs in the given subnets and security groups, with no endpoints and no address output', () => {
    const stack = newStack();
    const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
      vpcId: 'vpc-0123456789abcdef0',
      availabilityZones: ['eu-west-1a', 'eu-west-1b'],
      privateSubnetIds: ['subnet-0000000000000000a', 'subnet-0000000000000000b'],
      isolatedSubnetIds: ['subnet-0000000000000000c', 'subnet-0000000000000000d'],
    });
    const securityGroup = ec2.SecurityGroup.fromSecurityGroupId(stack, 'Group', 'sg-0123456789abcdef0');
    const poller = new BankingEventsPoller(stack, 'Poller', {
      vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      securityGroups: [securityGroup],
    });
    const template = Template.fromStack(stack);

    template.hasResourceProperties('AWS::Lambda::Function', {
      VpcConfig: {
        SubnetIds: ['subnet-0000000000000000c', 'subnet-0000000000000000d'],
        SecurityGroupIds: ['sg-0123456789abcdef0'],
      },
    });
    template.resourceCountIs('AWS::EC2::VPCEndpoint', 0);
    expect(template.findOutputs('*')).toEqual({});
    expect(poller.egressPublicIps).toEqual([]);
    expect(poller.vpcEndpoints).toBeUndefined();
  });
});

describe('the claim-check bucket', () => {
  it('logs server access to the bucket given, under its own prefix', () => {
    const stack = newStack();
    const logs = new s3.Bucket(stack, 'Logs', { enforceSSL: true });
    new BankingEventsPoller(stack, 'Poller', { claimCheckAccessLogsBucket: logs });

    Template.fromStack(stack).hasResourceProperties('AWS::S3::Bucket', {
      LoggingConfiguration: { DestinationBucketName: ref(stack, logs), LogFilePrefix: 'claim-check/' },
      VersioningConfiguration: { Status: 'Enabled' },
    });
  });

  it('is versioned, and expires old versions and leftover delete markers as it expires bodies', () => {
    const stack = newStack();
    new BankingEventsPoller(stack, 'Poller');

    Template.fromStack(stack).hasResourceProperties('AWS::S3::Bucket', {
      VersioningConfiguration: { Status: 'Enabled' },
      LifecycleConfiguration: {
        Rules: [
          Match.objectLike({ ExpirationInDays: 30, NoncurrentVersionExpiration: { NoncurrentDays: 30 } }),
          Match.objectLike({ ExpiredObjectDeleteMarker: true }),
        ],
      },
    });
  });
});

describe('props refused without what they need', () => {
  it.each<[string, (stack: Stack) => BankingEventsPollerProps, RegExp]>([
    [
      'vpcEndpoints',
      () => ({ vpcEndpoints: true }),
      /vpcEndpoints places the function in a VPC; pass vpc too/,
    ],
    [
      'vpcSubnets',
      () => ({ vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED } }),
      /vpcSubnets places the function in a VPC; pass vpc too/,
    ],
    [
      'securityGroups',
      (stack) => ({
        securityGroups: [ec2.SecurityGroup.fromSecurityGroupId(stack, 'G', 'sg-0123456789abcdef0')],
      }),
      /securityGroups places the function in a VPC; pass vpc too/,
    ],
    [
      'reservedConcurrency below the workers',
      () => ({ programs: [{ name: 'cards' }, { name: 'loans' }], workers: 2, reservedConcurrency: 1 }),
      /reservedConcurrency must be a whole number of at least 2 .*4 covers the hand-over/,
    ],
    [
      'reservedConcurrency not whole',
      () => ({ reservedConcurrency: 2.5 }),
      /reservedConcurrency must be a whole number/,
    ],
  ])('%s', (_name, props, message) => {
    const stack = newStack();
    expect(() => new BankingEventsPoller(stack, 'Poller', props(stack))).toThrow(message);
  });

  it('takes vpcEndpoints: false without a VPC (nothing to add)', () => {
    const stack = newStack();
    expect(() => new BankingEventsPoller(stack, 'Poller', { vpcEndpoints: false })).not.toThrow();
  });
});
