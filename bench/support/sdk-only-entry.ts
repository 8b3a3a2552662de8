/**
 * The yardstick of the cold-import comparison: only the AWS SDK clients the handler uses, with
 * the commands it sends. The handler's bundle adds to this its own code, Powertools and undici.
 */
export { DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
export { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
export { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
