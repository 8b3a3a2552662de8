import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkBankTls,
  checkValidity,
  daysLeft,
} from '../../../../functions/adapters/banking-http/client-certificate.ts';
import { ClientCertificateError } from '../../../../functions/core/errors.ts';
import { expectNoSecretShown } from '../../../support/secret-assertions.ts';
import { type CertificateAuthority, type IssuedCertificate, TestPki } from '../../../support/test-pki.ts';

const PASSPHRASE = 'correct horse battery staple';
/** Lines of a PEM body: any of them in an error would be key material shown. */
const pemBodyLines = (pem: string): string[] => pem.split('\n').filter((line) => line.length > 40);

let pki: TestPki;
let ca: CertificateAuthority;
let client: IssuedCertificate;
let encrypted: IssuedCertificate;
let other: IssuedCertificate;

beforeAll(() => {
  pki = TestPki.create();
  ca = pki.authority('Test Bank CA');
  client = ca.issue({ commonName: 'poller', usage: 'client', days: 30 });
  encrypted = ca.issue({ commonName: 'poller-encrypted', usage: 'client', passphrase: PASSPHRASE });
  other = ca.issue({ commonName: 'someone-else', usage: 'client' });
});
afterAll(() => pki.close());

/** The error `action` throws, which must be a `ClientCertificateError`. */
function refusal(action: () => unknown): ClientCertificateError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ClientCertificateError);
    return error as ClientCertificateError;
  }
  throw new Error('expected a ClientCertificateError');
}

describe('checkBankTls', () => {
  it('accepts a certificate with its key and reports its public facts', () => {
    const checked = checkBankTls({ clientCertificate: client.certificate, clientKey: client.key });

    const x509 = new X509Certificate(client.certificate);
    expect(checked.certificate).toMatchObject({
      subject: 'CN=poller',
      issuer: 'CN=Test Bank CA',
      validTo: new Date(x509.validTo),
      fingerprint256: x509.fingerprint256,
    });
    expect(checked.options).toMatchObject({ cert: client.certificate, key: client.key });
  });

  it('decrypts an encrypted key with client_key_passphrase', () => {
    const checked = checkBankTls({
      clientCertificate: encrypted.certificate,
      clientKey: encrypted.key,
      clientKeyPassphrase: PASSPHRASE,
    });

    expect(encrypted.key).toContain('ENCRYPTED PRIVATE KEY');
    expect(checked.certificate?.subject).toBe('CN=poller-encrypted');
    expect(checked.options.passphrase).toBe(PASSPHRASE);
  });

  it('accepts a CA alone (the bank signs its server certificate with a private CA)', () => {
    const checked = checkBankTls({ caCertificate: ca.certificate });

    expect(checked).toEqual({ options: { ca: ca.certificate } });
  });

  it('refuses a key that does not match the certificate, naming client_key', () => {
    const error = refusal(() =>
      checkBankTls({ clientCertificate: client.certificate, clientKey: other.key }),
    );

    expect(error.code).toBe('CLIENT_CERTIFICATE_INVALID');
    expect(error.context.field).toBe('client_key');
    expectNoSecretShown(error, [...pemBodyLines(other.key), ...pemBodyLines(client.key)]);
  });

  it('refuses an encrypted key without its passphrase, naming client_key_passphrase', () => {
    const error = refusal(() =>
      checkBankTls({ clientCertificate: encrypted.certificate, clientKey: encrypted.key }),
    );

    expect(error.context.field).toBe('client_key_passphrase');
  });

  it('refuses a passphrase that does not decrypt the key, without showing either', () => {
    const error = refusal(() =>
      checkBankTls({
        clientCertificate: encrypted.certificate,
        clientKey: encrypted.key,
        clientKeyPassphrase: 'not it',
      }),
    );

    expect(error.context.field).toBe('client_key_passphrase');
    expectNoSecretShown(error, ['not it', ...pemBodyLines(encrypted.key)]);
  });

  it('refuses a client_key that is not a PEM key', () => {
    const error = refusal(() => checkBankTls({ clientCertificate: client.certificate, clientKey: 'abc' }));

    expect(error.context.field).toBe('client_key');
  });

  it('refuses a client_certificate that holds no certificate or one that does not parse', () => {
    const keyAsCertificate = refusal(() =>
      checkBankTls({ clientCertificate: client.key, clientKey: client.key }),
    );
    const broken = refusal(() =>
      checkBankTls({
        clientCertificate: client.certificate.replace(/^[A-Za-z0-9+/]{64}$/m, 'A'.repeat(64)),
        clientKey: client.key,
      }),
    );

    expect(keyAsCertificate.context.field).toBe('client_certificate');
    expectNoSecretShown(keyAsCertificate, pemBodyLines(client.key));
    expect(broken.context.field).toBe('client_certificate');
  });

  it('refuses a ca_certificate that does not parse', () => {
    const error = refusal(() => checkBankTls({ caCertificate: 'not a certificate' }));

    expect(error.context.field).toBe('ca_certificate');
  });

  it('refuses half a pair: a certificate without its key, a key or a passphrase without a certificate', () => {
    expect(refusal(() => checkBankTls({ clientCertificate: client.certificate })).context.field).toBe(
      'client_key',
    );
    expect(refusal(() => checkBankTls({ clientKey: client.key })).context.field).toBe('client_certificate');
    expect(refusal(() => checkBankTls({ clientKeyPassphrase: PASSPHRASE })).context.field).toBe('client_key');
  });
});

describe('checkValidity and daysLeft', () => {
  const certificate = {
    subject: 'CN=poller',
    issuer: 'CN=Test Bank CA',
    validFrom: new Date('2026-01-01T00:00:00Z'),
    validTo: new Date('2026-03-01T00:00:00Z'),
    fingerprint256: 'AA',
  };

  it('passes within the validity period and counts whole days left', () => {
    const now = Date.parse('2026-02-19T12:00:00Z');

    expect(() => checkValidity(certificate, now)).not.toThrow();
    expect(daysLeft(certificate, now)).toBe(9);
  });

  it('refuses an expired certificate, naming client_certificate and when it expired', () => {
    const now = Date.parse('2026-03-01T00:00:01Z');

    const error = refusal(() => checkValidity(certificate, now));

    expect(error.context).toMatchObject({ field: 'client_certificate', validTo: '2026-03-01T00:00:00.000Z' });
    expect(daysLeft(certificate, now)).toBe(-1);
  });

  it('refuses a certificate not yet valid', () => {
    const error = refusal(() => checkValidity(certificate, Date.parse('2025-12-31T23:59:59Z')));

    expect(error.context).toMatchObject({
      field: 'client_certificate',
      validFrom: '2026-01-01T00:00:00.000Z',
    });
  });

  it('reads the dates of a real certificate issued in the past', () => {
    const expired = ca.issue({
      commonName: 'old',
      usage: 'client',
      period: { from: new Date('2020-01-01T00:00:00Z'), to: new Date('2020-02-01T00:00:00Z') },
    });
    const checked = checkBankTls({ clientCertificate: expired.certificate, clientKey: expired.key });

    const error = refusal(() => checkValidity(checked.certificate!, Date.parse('2026-01-01T00:00:00Z')));

    expect(error.context.validTo).toBe('2020-02-01T00:00:00.000Z');
  });
});
