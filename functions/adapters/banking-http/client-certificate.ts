/**
 * The secret's mutual TLS material, checked before a connection uses it: every PEM parses, the
 * client certificate comes with its key and the key matches it (decrypted with its passphrase),
 * and the certificate is within its validity period. A bad field is refused with
 * `ClientCertificateError` naming it; nothing of a key, a passphrase or a certificate is quoted.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { ClientCertificateError } from '../../core/errors.ts';
import type { BankingTls } from '../../core/ports.ts';

/** What `doctor`, the log and the days-left metric show of the client certificate: public facts only. */
export interface ClientCertificateInfo {
  /** e.g. `CN=poller, O=Example`. */
  readonly subject: string;
  readonly issuer: string;
  readonly validFrom: Date;
  readonly validTo: Date;
  /** SHA-256 fingerprint, colon-separated hex. */
  readonly fingerprint256: string;
}

/** What undici's connector passes on to `tls.connect`. */
export interface BankTlsOptions {
  readonly cert?: string;
  readonly key?: string;
  readonly passphrase?: string;
  readonly ca?: string;
}

export interface CheckedBankTls {
  readonly options: BankTlsOptions;
  /** Absent when the secret names only a CA. */
  readonly certificate?: ClientCertificateInfo;
}

const DAY_MS = 86_400_000;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
/** PKCS#8 `ENCRYPTED PRIVATE KEY`, or a legacy PEM key with `Proc-Type: 4,ENCRYPTED`. */
const ENCRYPTED_KEY = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,ENCRYPTED/;

/**
 * Parses and cross-checks the material; the validity period is left to `checkValidity` (the
 * result is cached per secret value, the clock moves on).
 *
 * @throws ClientCertificateError naming the field at fault.
 */
export function checkBankTls(tls: BankingTls): CheckedBankTls {
  const { clientCertificate, clientKey, clientKeyPassphrase, caCertificate } = tls;
  if (caCertificate !== undefined) parseCertificates(caCertificate, 'ca_certificate');
  if (clientCertificate === undefined) {
    if (clientKey !== undefined) throw missing('client_certificate', 'client_key');
    if (clientKeyPassphrase !== undefined) throw missing('client_key', 'client_key_passphrase');
    return { options: { ca: caCertificate } };
  }
  if (clientKey === undefined) throw missing('client_key', 'client_certificate');
  const key = privateKey(clientKey, clientKeyPassphrase);
  const [leaf] = parseCertificates(clientCertificate, 'client_certificate');
  if (!leaf!.checkPrivateKey(key)) {
    throw new ClientCertificateError(
      'client_key does not match client_certificate: store the key the certificate was issued for',
      { field: 'client_key' },
    );
  }
  return {
    options: { cert: clientCertificate, key: clientKey, passphrase: clientKeyPassphrase, ca: caCertificate },
    certificate: infoOf(leaf!),
  };
}

/**
 * @throws ClientCertificateError (field `client_certificate`) when `now` is outside the
 *   certificate's validity period.
 */
export function checkValidity(certificate: ClientCertificateInfo, now: number): void {
  const context = { field: 'client_certificate', validTo: certificate.validTo.toISOString() };
  if (now > certificate.validTo.getTime()) {
    throw new ClientCertificateError(
      `client_certificate (${certificate.subject}) expired at ${certificate.validTo.toISOString()}: ` +
        'store a renewed certificate and key in the secret',
      context,
    );
  }
  if (now < certificate.validFrom.getTime()) {
    throw new ClientCertificateError(
      `client_certificate (${certificate.subject}) is not valid before ${certificate.validFrom.toISOString()}`,
      { ...context, validFrom: certificate.validFrom.toISOString() },
    );
  }
}

/** Whole days until the certificate expires (negative once it has): the `ClientCertificateDaysLeft` metric. */
export function daysLeft(certificate: ClientCertificateInfo, now: number): number {
  return Math.floor((certificate.validTo.getTime() - now) / DAY_MS);
}

/** Every certificate in the PEM text (a chain or a CA bundle), the first one first. */
function parseCertificates(pem: string, field: string): X509Certificate[] {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) {
    throw new ClientCertificateError(`${field} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`, {
      field,
    });
  }
  return blocks.map((block, index) => {
    try {
      return new X509Certificate(block);
    } catch {
      // OpenSSL's reason only; the cause is left out with the text it was given.
      throw new ClientCertificateError(
        `${field}: certificate ${index + 1} of ${blocks.length} does not parse`,
        {
          field,
        },
      );
    }
  });
}

function privateKey(pem: string, passphrase: string | undefined): KeyObject {
  const encrypted = ENCRYPTED_KEY.test(pem);
  if (encrypted && passphrase === undefined) {
    throw new ClientCertificateError('client_key is encrypted: set client_key_passphrase', {
      field: 'client_key_passphrase',
    });
  }
  try {
    return createPrivateKey({ key: pem, format: 'pem', ...(passphrase === undefined ? {} : { passphrase }) });
  } catch {
    // OpenSSL's reason is not kept as the cause: it is about the key's text.
    if (encrypted) {
      throw new ClientCertificateError('client_key_passphrase does not decrypt client_key', {
        field: 'client_key_passphrase',
      });
    }
    throw new ClientCertificateError('client_key is not a PEM private key', { field: 'client_key' });
  }
}

function infoOf(certificate: X509Certificate): ClientCertificateInfo {
  return Object.freeze({
    subject: distinguishedName(certificate.subject),
    issuer: distinguishedName(certificate.issuer),
    validFrom: new Date(certificate.validFrom),
    validTo: new Date(certificate.validTo),
    fingerprint256: certificate.fingerprint256,
  });
}

/** Node gives one `KEY=value` per line. */
function distinguishedName(lines: string): string {
  return lines.split('\n').filter(Boolean).join(', ');
}

function missing(field: string, because: string): ClientCertificateError {
  return new ClientCertificateError(`${because} is set but ${field} is not: mutual TLS needs both`, {
    field,
  });
}
