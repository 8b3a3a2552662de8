import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

/**
 * The topic alarms notify, encrypted with a customer-managed key: CloudWatch can publish to an
 * encrypted topic only if it may use the key, and AWS-managed keys cannot grant that. With
 * `encryptionKey` the topic uses that key (its policy admits CloudWatch, `encryption-key.ts`);
 * without, a key of its own.
 */
export function createAlarmTopic(scope: Construct, encryptionKey?: kms.IKey): sns.Topic {
  let masterKey = encryptionKey;
  if (masterKey === undefined) {
    const key = new kms.Key(scope, 'AlarmTopicKey', {
      description: 'Encrypts the banking events poller alarm topic',
      enableKeyRotation: true,
    });
    key.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    masterKey = key;
  }
  return new sns.Topic(scope, 'AlarmTopic', {
    displayName: 'Banking events poller alarms',
    masterKey,
    enforceSSL: true,
  });
}
