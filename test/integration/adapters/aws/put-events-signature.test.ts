/**
 * The hand-made SigV4 signature of PutEvents checked by a verifier that is not ours: a moto server
 * of its own with authentication on (`/moto-api/reset-auth`), which recomputes each request's
 * signature with botocore's signer from the IAM access key it issued, and refuses a mismatch
 * with `SignatureDoesNotMatch`. Users, keys, the role and its session credentials are made with
 * boto3 before authentication is switched on.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignedPutEvents } from '../../../../functions/adapters/aws/put-events-transport.ts';
import { type MotoServer, startMoto } from '../../../support/moto-server.ts';

const REGION = 'eu-west-1';
const BUS = 'signed-bus';

/** Run before authentication is on: an IAM user allowed to put events, its key, and a role session. */
const SETUP = `
import boto3, json, sys
endpoint = sys.argv[1]
kw = dict(endpoint_url=endpoint, region_name="${REGION}", aws_access_key_id="setup", aws_secret_access_key="setup")
iam = boto3.client("iam", **kw)
allow = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "events:PutEvents", "Resource": "*"}]})
iam.create_user(UserName="poller")
iam.put_user_policy(UserName="poller", PolicyName="put", PolicyDocument=allow)
key = iam.create_access_key(UserName="poller")["AccessKey"]
trust = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]})
iam.create_role(RoleName="poller-role", AssumeRolePolicyDocument=trust)
iam.put_role_policy(RoleName="poller-role", PolicyName="put", PolicyDocument=allow)
arn = iam.get_role(RoleName="poller-role")["Role"]["Arn"]
session = boto3.client("sts", **kw).assume_role(RoleArn=arn, RoleSessionName="poller")["Credentials"]
boto3.client("events", **kw).create_event_bus(Name="${BUS}")
print(json.dumps({
  "user": {"accessKeyId": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"]},
  "role": {"accessKeyId": session["AccessKeyId"], "secretAccessKey": session["SecretAccessKey"], "sessionToken": session["SessionToken"]},
}))
`;

interface Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

const ENTRY = {
  source: 'com.example.banking',
  detailType: 'transaction',
  detail: JSON.stringify({ id: 'evt-1', sequence_number: 1, note: 'Zürich € "quoted"\n' }),
  time: Date.parse('2026-11-24T10:00:00.250Z'),
  eventBusName: BUS,
};

describe('PutEvents signed by hand, verified by moto with authentication on', () => {
  let moto: MotoServer;
  let issued: { user: Credentials; role: Credentials };
  const clients: EventBridgeClient[] = [];

  function transport(credentials: Credentials): SignedPutEvents {
    const client = new EventBridgeClient({ region: REGION, endpoint: moto.endpoint, credentials });
    clients.push(client);
    return new SignedPutEvents({ client });
  }

  beforeAll(async () => {
    moto = await startMoto();
    const python = process.env.MOTO_PYTHON ?? 'python3';
    const { stdout } = await promisify(execFile)(python, ['-c', SETUP, moto.endpoint]);
    issued = JSON.parse(stdout) as typeof issued;
    // From here on every request must carry a valid signature of a key moto issued.
    const reset = await request(`${moto.endpoint}/moto-api/reset-auth`, { method: 'POST', body: '0' });
    expect(reset.statusCode).toBe(200);
    await reset.body.dump();
  });

  afterAll(async () => {
    for (const client of clients) client.destroy();
    await moto?.stop();
  });

  it("is accepted with an IAM user's access key", async () => {
    const results = await transport(issued.user).putEvents([ENTRY], new AbortController().signal);

    expect(results).toEqual([{ EventId: expect.any(String) }]);
  });

  it('is accepted with role session credentials, their session token signed too', async () => {
    const results = await transport(issued.role).putEvents(
      [ENTRY, { ...ENTRY, detailType: 'account_status' }],
      new AbortController().signal,
    );

    expect(results).toEqual([{ EventId: expect.any(String) }, { EventId: expect.any(String) }]);
  });

  it('is refused when the secret key is wrong: the verifier does check', async () => {
    // Another last character, whatever the issued one is: a fixed 'x' is no change for a key ending in 'x'.
    const secret = issued.user.secretAccessKey;
    const wrong = {
      ...issued.user,
      secretAccessKey: `${secret.slice(0, -1)}${secret.endsWith('x') ? 'y' : 'x'}`,
    };
    expect(wrong.secretAccessKey).not.toBe(secret);

    await expect(transport(wrong).putEvents([ENTRY], new AbortController().signal)).rejects.toMatchObject({
      name: 'SignatureDoesNotMatch',
      $metadata: { httpStatusCode: 403 },
    });
  });

  it('is refused when the session token is left out of a role session', async () => {
    const { sessionToken: _left, ...withoutToken } = issued.role;

    await expect(
      transport(withoutToken).putEvents([ENTRY], new AbortController().signal),
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
  });
});
