/**
 * Client settings for every AWS SDK client the poller builds. The SDK's defaults have no
 * connection or request timeout, so one hung connection to Secrets Manager or DynamoDB would hold
 * the invocation (and its lease) until Lambda kills it. These bound a call, retries included, to
 * about 10 s: 3 attempts of at most 1 s to connect and 2 s to answer (DynamoDB and PutEvents
 * normally answer in milliseconds). Region, credentials and endpoint still come from the SDK's
 * default chain (`AWS_REGION`, `AWS_ENDPOINT_URL`, …).
 */
export const boundedClientConfig = {
  maxAttempts: 3,
  requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000, throwOnRequestTimeout: true },
} as const;
