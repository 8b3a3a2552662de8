/**
 * The bank profile: the construct as a regulated deployment uses it. One customer-managed key for
 * every store, the function in private subnets whose traffic to the bank leaves through two NAT
 * gateways (their Elastic IPs are the allowlist, output as `EgressPublicIps`), VPC endpoints for
 * the AWS calls, reserved concurrency, server access logs and VPC flow logs in a log bucket.
 * docs/deploy.md ("Deploying in a regulated environment") shows this file; the compliance test
 * synthesizes it under four cdk-nag packs.
 */
import { Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { BankingEventsPoller } from 'banking-events-poller';
import type { Construct } from 'constructs';

export class BankProfileStack extends Stack {
  public readonly poller: BankingEventsPoller;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);

    const key = new kms.Key(this, 'Key', {
      description: 'Banking events poller: every store it creates',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // S3 delivers server access logs and flow logs only to an SSE-S3 bucket.
    const logBucket = new s3.Bucket(this, 'LogBucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      lifecycleRules: [{ expiration: Duration.days(400), noncurrentVersionExpiration: Duration.days(30) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 2,
      subnetConfiguration: [
        // The public subnets hold the NAT gateways and nothing else.
        { name: 'Public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24, mapPublicIpOnLaunch: false },
        { name: 'Private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 24 },
      ],
      flowLogs: {
        All: { destination: ec2.FlowLogDestination.toS3(logBucket, 'vpc-flow-logs/') },
      },
    });

    this.poller = new BankingEventsPoller(this, 'Poller', {
      programs: [{ name: 'cards' }, { name: 'loans' }],
      encryptionKey: key,
      vpc,
      vpcEndpoints: true,
      // Two programs: one run each, and the next tick's run waiting for the lease.
      reservedConcurrency: 4,
      claimCheckAccessLogsBucket: logBucket,
      alarmEmail: 'oncall@example.com',
    });

    for (const subnet of vpc.publicSubnets) {
      for (const pack of ['HIPAA.Security', 'NIST.800.53.R5', 'PCI.DSS.321']) {
        Validations.of(subnet).acknowledge({
          id: `${pack}-VPCNoUnrestrictedRouteToIGW`,
          reason:
            'The public subnets hold only the NAT gateways, whose route to the internet gateway is how the ' +
            "function reaches the bank from the NAT's fixed address; nothing else runs in them.",
        });
      }
    }

    const logBucketReasons = {
      S3BucketLoggingEnabled: 'This bucket receives the access logs; logging it to itself would loop.',
      S3BucketReplicationEnabled:
        'Access and flow logs are kept in one region for 400 days; copy them to your log archive account ' +
        'with your organisation-wide tooling, not from this stack.',
      S3DefaultEncryptionKMS: 'S3 server access logging delivers only to buckets encrypted with SSE-S3.',
    };
    for (const [rule, reason] of Object.entries(logBucketReasons)) {
      for (const pack of ['HIPAA.Security', 'NIST.800.53.R5', 'PCI.DSS.321']) {
        Validations.of(logBucket).acknowledge({ id: `${pack}-${rule}`, reason });
      }
    }
    Validations.of(logBucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'This bucket receives the access logs; logging it to itself would loop.',
    });
  }
}
