import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

/**
 * The topic alarms notify, encrypted with a customer-managed key: CloudWatch can publish to an
 * encrypted topic only if it may use the key, and AWS-managed keys cannot grant that.
 */
export function createAlarmTopic(scope: Construct): sns.Topic {
  const key = new kms.Key(scope, 'AlarmTopicKey', {
    description: 'Encrypts the banking events poller alarm topic',
    enableKeyRotation: true,
  });
  key.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
  return new sns.Topic(scope, 'AlarmTopic', {
    displayName: 'Banking events poller alarms',
    masterKey: key,
    enforceSSL: true,
  });
}
