import { ConfigurationError } from './errors.ts';
import type { BankingCredentials, BankingTls } from './ports.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1']);

/** 127.0.0.0/8, `::1` and `localhost`: the only hosts plain HTTP may reach (tests, local mode). */
export function isLoopbackHost(hostname: string): boolean {
  if (LOOPBACK_HOSTS.has(hostname)) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * Validates a base URL: `https://` anywhere, `http://` only on loopback. Returns it without a
 * trailing slash. `where` names the source in the error (a secret id, an env variable).
 */
export function parseBaseUrl(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ConfigurationError(`${where}: base_url must be a non-empty URL string`, {
      where,
      field: 'base_url',
    });
  }
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    // Not kept as the cause: Node's TypeError carries the raw input, which may hold user:password@.
    throw new ConfigurationError(`${where}: base_url is not a valid URL`, { where, field: 'base_url' });
  }
  if (url.username || url.password) {
    throw new ConfigurationError(`${where}: base_url must not embed credentials`, {
      where,
      field: 'base_url',
    });
  }
  if (url.search || url.hash) {
    throw new ConfigurationError(`${where}: base_url must not carry a query string or fragment`, {
      where,
      field: 'base_url',
    });
  }
  const secure = url.protocol === 'https:';
  const loopbackHttp = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (!secure && !loopbackHttp) {
    throw new ConfigurationError(
      `${where}: base_url must use https:// (plain http:// is allowed only for loopback hosts), got ${url.protocol}//${url.host}`,
      { where, field: 'base_url', host: url.host },
    );
  }
  return url.toString().replace(/\/+$/, '');
}

/**
 * Parses the secret's JSON `{"base_url", "client_id", "client_secret"}`, with the optional mutual
 * TLS fields `client_certificate`, `client_key`, `client_key_passphrase` and `ca_certificate`.
 * Errors name the secret and the field, never a value of it.
 */
export function parseBankingCredentials(secretString: string | undefined, where: string): BankingCredentials {
  if (secretString === undefined || secretString.trim() === '') {
    throw new ConfigurationError(
      `${where}: the secret has no string value; set it to {"base_url", "client_id", "client_secret"}`,
      {
        where,
      },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString);
  } catch {
    // The cause would quote the secret text, so it is left out on purpose.
    throw new ConfigurationError(`${where}: the secret value is not valid JSON`, { where });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigurationError(`${where}: the secret value must be a JSON object`, { where });
  }
  const record = parsed as Record<string, unknown>;
  for (const field of ['client_id', 'client_secret'] as const) {
    const value = record[field];
    if (typeof value !== 'string' || value === '' || value.startsWith('<')) {
      throw new ConfigurationError(
        `${where}: ${field} must be a non-empty string (is the placeholder still there?)`,
        {
          where,
          field,
        },
      );
    }
  }
  const tls = parseTlsFields(record, where);
  return Object.freeze({
    baseUrl: parseBaseUrl(record.base_url, where),
    clientId: record.client_id as string,
    clientSecret: record.client_secret as string,
    ...(tls === undefined ? {} : { tls }),
  });
}

/** The secret's mutual TLS fields and where each lands. */
const TLS_FIELDS = [
  ['client_certificate', 'clientCertificate'],
  ['client_key', 'clientKey'],
  ['client_key_passphrase', 'clientKeyPassphrase'],
  ['ca_certificate', 'caCertificate'],
] as const satisfies ReadonlyArray<readonly [string, keyof BankingTls]>;

/**
 * The optional mutual TLS fields, as text; their content (PEM, a key that matches, dates) is
 * checked where the connection is built. Absent, null or "" all mean "not used".
 */
function parseTlsFields(record: Record<string, unknown>, where: string): BankingTls | undefined {
  const tls: { -readonly [K in keyof BankingTls]: string } = {};
  for (const [field, key] of TLS_FIELDS) {
    const value = record[field];
    if (value === undefined || value === null || value === '') continue;
    if (typeof value !== 'string') {
      throw new ConfigurationError(`${where}: ${field} must be a string (PEM text)`, { where, field });
    }
    tls[key] = value;
  }
  return Object.keys(tls).length === 0 ? undefined : Object.freeze(tls);
}
