/**
 * The function's network when it runs in a VPC: the VPC endpoints that keep its AWS calls inside
 * the VPC (opt-in), and the stack output naming the public addresses its traffic to the bank
 * leaves from, when they are in the same stack.
 */
import { CfnOutput, Fn, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { PollerNetworkProps } from './poller-props-resolution.ts';

/**
 * Gateway endpoints for DynamoDB (checkpoint) and S3 (claim check) on the route tables of the
 * function's subnets, and interface endpoints with private DNS for Secrets Manager (credentials)
 * and EventBridge (PutEvents) in those subnets, behind one security group that admits the function
 * alone, on 443. No CloudWatch Logs or monitoring endpoint: Lambda ships the function's logs and
 * its metrics (EMF, in the logs) itself, outside the VPC; nor KMS: only the services call it.
 */
export class PollerVpcEndpoints extends Construct {
  public readonly securityGroup: ec2.SecurityGroup;
  public readonly gatewayEndpoints: ec2.GatewayVpcEndpoint[];
  public readonly interfaceEndpoints: ec2.InterfaceVpcEndpoint[];

  constructor(scope: Construct, id: string, network: PollerNetworkProps, pollerFunction: lambda.IFunction) {
    super(scope, id);
    const { vpc, vpcSubnets } = network;
    this.gatewayEndpoints = [
      ['DynamoDb', ec2.GatewayVpcEndpointAwsService.DYNAMODB],
      ['S3', ec2.GatewayVpcEndpointAwsService.S3],
    ].map(
      ([name, service]) =>
        new ec2.GatewayVpcEndpoint(this, name as string, {
          vpc,
          service: service as ec2.GatewayVpcEndpointAwsService,
          subnets: [vpcSubnets],
        }),
    );
    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc,
      description: 'Banking events poller VPC endpoints: HTTPS from the poller function only',
      allowAllOutbound: false,
    });
    this.interfaceEndpoints = [
      ['SecretsManager', ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER],
      ['EventBridge', ec2.InterfaceVpcEndpointAwsService.EVENTBRIDGE],
    ].map(
      ([name, service]) =>
        new ec2.InterfaceVpcEndpoint(this, name as string, {
          vpc,
          service: service as ec2.InterfaceVpcEndpointAwsService,
          subnets: vpcSubnets,
          securityGroups: [this.securityGroup],
          // `open` would admit the whole VPC's CIDR; the function alone is admitted below.
          open: false,
          privateDnsEnabled: true,
        }),
    );
    this.securityGroup.connections.allowFrom(
      pollerFunction,
      ec2.Port.tcp(443),
      'HTTPS from the banking events poller function',
    );
  }
}

/**
 * The Elastic IPs of `vpc`'s NAT gateways when the VPC was created in the same stack (the
 * construct sees their `AWS::EC2::EIP` resources); empty for an imported VPC, whose addresses the
 * construct cannot know (docs/deploy.md: how to look them up).
 */
export function natPublicIps(scope: Construct, vpc: ec2.IVpc): string[] {
  if (!(vpc instanceof ec2.Vpc) || Stack.of(vpc) !== Stack.of(scope)) return [];
  return vpc.node
    .findAll()
    .filter((construct): construct is ec2.CfnEIP => construct instanceof ec2.CfnEIP)
    .map((eip) => eip.attrPublicIp);
}

/** The stack output a bank's allowlist is filled from; none when the addresses are not known. */
export function addEgressOutput(scope: Construct, addresses: readonly string[]): CfnOutput | undefined {
  if (addresses.length === 0) return undefined;
  return new CfnOutput(scope, 'EgressPublicIps', {
    value: Fn.join(',', [...addresses]),
    description:
      'Public addresses the poller reaches the banking service from (the NAT gateways of its VPC): the allowlist',
  });
}
