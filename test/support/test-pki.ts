/**
 * Certificates for the mutual TLS tests, made with the machine's `openssl` in a temporary
 * directory (removed by `close()`): certificate authorities, server certificates for `localhost`,
 * client certificates valid, expired or with an encrypted key. Nothing is cached between runs.
 *
 * @example
 * const pki = TestPki.create();
 * const ca = pki.authority('Test Bank CA');
 * const server = ca.issue({ commonName: 'localhost', usage: 'server' });
 * const client = ca.issue({ commonName: 'poller', usage: 'client', passphrase: 'pw' });
 * pki.close();
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A certificate and its private key, both PEM. */
export interface IssuedCertificate {
  readonly certificate: string;
  readonly key: string;
}

export interface IssueOptions {
  readonly commonName: string;
  /** `server` adds the `localhost` and `127.0.0.1` names. */
  readonly usage: 'server' | 'client';
  /** Valid from now for this many days. @default 30 */
  readonly days?: number;
  /** An explicit validity period instead (an expired certificate: both in the past). */
  readonly period?: { readonly from: Date; readonly to: Date };
  /** Encrypts the key (AES-256) with this passphrase. */
  readonly passphrase?: string;
}

function openssl(args: readonly string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** `YYYYMMDDHHMMSSZ`, the form `openssl ca -startdate` takes. */
function asn1Time(date: Date): string {
  return `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
}

export class CertificateAuthority {
  readonly certificate: string;
  readonly #dir: string;
  #issued = 0;

  constructor(dir: string, commonName: string) {
    this.#dir = dir;
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'index.txt'), '');
    writeFileSync(path.join(dir, 'serial'), '1000\n');
    writeFileSync(
      path.join(dir, 'ca.cnf'),
      [
        '[ca]',
        'default_ca = test',
        '[test]',
        `database = ${path.join(dir, 'index.txt')}`,
        `new_certs_dir = ${dir}`,
        `serial = ${path.join(dir, 'serial')}`,
        'default_md = sha256',
        'policy = any',
        'unique_subject = no',
        'copy_extensions = none',
        '[any]',
        'commonName = supplied',
        '[server]',
        'basicConstraints = CA:FALSE',
        'keyUsage = digitalSignature',
        'extendedKeyUsage = serverAuth',
        'subjectAltName = DNS:localhost, IP:127.0.0.1',
        '[client]',
        'basicConstraints = CA:FALSE',
        'keyUsage = digitalSignature',
        'extendedKeyUsage = clientAuth',
        '',
      ].join('\n'),
    );
    openssl(
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        'ca.key',
        '-out',
        'ca.crt',
        '-days',
        '365',
        '-subj',
        `/CN=${commonName}`,
      ],
      dir,
    );
    this.certificate = readFileSync(path.join(dir, 'ca.crt'), 'utf8');
  }

  issue(options: IssueOptions): IssuedCertificate {
    this.#issued += 1;
    const name = `cert-${this.#issued}`;
    const dir = this.#dir;
    openssl(
      [
        'req',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.csr`,
        '-subj',
        `/CN=${options.commonName}`,
      ],
      dir,
    );
    const validity =
      options.period === undefined
        ? ['-days', String(options.days ?? 30)]
        : ['-startdate', asn1Time(options.period.from), '-enddate', asn1Time(options.period.to)];
    openssl(
      [
        'ca',
        '-batch',
        '-config',
        'ca.cnf',
        '-cert',
        'ca.crt',
        '-keyfile',
        'ca.key',
        '-notext',
        '-extensions',
        options.usage,
        '-extfile',
        'ca.cnf',
        ...validity,
        '-in',
        `${name}.csr`,
        '-out',
        `${name}.crt`,
      ],
      dir,
    );
    if (options.passphrase !== undefined) {
      openssl(
        [
          'pkey',
          '-in',
          `${name}.key`,
          '-aes256',
          '-passout',
          `pass:${options.passphrase}`,
          '-out',
          `${name}.enc.key`,
        ],
        dir,
      );
    }
    return {
      certificate: readFileSync(path.join(dir, `${name}.crt`), 'utf8'),
      key: readFileSync(
        path.join(dir, options.passphrase === undefined ? `${name}.key` : `${name}.enc.key`),
        'utf8',
      ),
    };
  }
}

export class TestPki {
  readonly #root: string;
  #authorities = 0;

  private constructor(root: string) {
    this.#root = root;
  }

  static create(): TestPki {
    return new TestPki(mkdtempSync(path.join(tmpdir(), 'test-pki-')));
  }

  authority(commonName: string): CertificateAuthority {
    this.#authorities += 1;
    return new CertificateAuthority(path.join(this.#root, `ca-${this.#authorities}`), commonName);
  }

  close(): void {
    rmSync(this.#root, { recursive: true, force: true });
  }
}
