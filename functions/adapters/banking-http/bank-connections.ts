/**
 * The connections to one banking service: an undici dispatcher that presents the secret's client
 * certificate (mutual TLS) on every connection and goes through the egress proxy the environment
 * names (`HTTPS_PROXY`, `NO_PROXY` and their lower-case forms; undici's `EnvHttpProxyAgent`).
 * `HTTP_PROXY` is not used: the bank is reached over https, plain http only on loopback, which no
 * proxy can reach (a developer's corporate proxy must not take the local simulator's traffic).
 * Only the bank's traffic uses it: the AWS clients keep their own connections, so a proxy for the
 * bank never carries a signed AWS request.
 *
 * A secret rotated to other TLS material gets a new dispatcher; the old one is closed once its
 * requests in flight are done.
 */
import { type Dispatcher, EnvHttpProxyAgent } from 'undici';
import { ConfigurationError } from '../../core/errors.ts';
import type { BankingCredentials, BankingTls } from '../../core/ports.ts';
import { type ClientCertificateInfo, checkBankTls, checkValidity } from './client-certificate.ts';

/** Where the token provider and the feed get the dispatcher for a secret's value. */
export interface DispatcherSource {
  /**
   * The dispatcher for these credentials' TLS material.
   * @throws ClientCertificateError when the material cannot be used (see `client-certificate.ts`).
   */
  dispatcherFor(credentials: BankingCredentials): Dispatcher;
}

export interface BankConnectionsOptions {
  /** Epoch milliseconds, for the certificate's validity. @default Date.now */
  readonly clock?: () => number;
  /**
   * The variables the proxy settings are read from.
   * @default process.env
   */
  readonly environment?: Readonly<Record<string, string | undefined>>;
}

interface Current {
  /** The TLS material the dispatcher was built for. */
  readonly identity: string;
  readonly dispatcher: Dispatcher;
  readonly certificate: ClientCertificateInfo | undefined;
}

const PROXY_VARIABLES = ['https_proxy', 'HTTPS_PROXY'] as const;

/**
 * One per secret, kept while the container is warm (connections are reused across invocations).
 *
 * @example
 * const connections = new BankConnections(); // module scope, one per secret
 * const tokens = new ClientCredentialsTokenProvider({ credentials, connections });
 * // after a run: connections.certificate?.validTo
 */
export class BankConnections implements DispatcherSource {
  readonly #clock: () => number;
  readonly #environment: Readonly<Record<string, string | undefined>>;
  #current: Current | undefined;
  #certificate: ClientCertificateInfo | undefined;

  constructor(options: BankConnectionsOptions = {}) {
    this.#clock = options.clock ?? Date.now;
    this.#environment = options.environment ?? process.env;
  }

  /**
   * The client certificate of the last secret value seen, also when it was refused for its dates
   * (an expired certificate still reports its days left).
   */
  get certificate(): ClientCertificateInfo | undefined {
    return this.#certificate;
  }

  dispatcherFor(credentials: BankingCredentials): Dispatcher {
    const identity = identityOf(credentials.tls);
    let current = this.#current;
    if (current === undefined || current.identity !== identity) {
      const checked = credentials.tls === undefined ? undefined : checkBankTls(credentials.tls);
      this.#certificate = checked?.certificate;
      const replaced = current;
      current = {
        identity,
        dispatcher: this.#build(checked?.options),
        certificate: checked?.certificate,
      };
      this.#current = current;
      // Requests already sent on the old connections finish; new ones use the new material.
      replaced?.dispatcher.close().catch(() => undefined);
    }
    // Checked on every use: a certificate expires while the container stays warm.
    if (current.certificate !== undefined) checkValidity(current.certificate, this.#clock());
    return current.dispatcher;
  }

  /** Closes the connections (tests, the CLI at exit). */
  async close(): Promise<void> {
    const current = this.#current;
    this.#current = undefined;
    await current?.dispatcher.close();
  }

  #build(tls: object | undefined): Dispatcher {
    const env = this.#environment;
    // Read here, in undici's order, so `environment` is the only source ("" means none).
    const proxy = {
      httpProxy: '',
      httpsProxy: env.https_proxy ?? env.HTTPS_PROXY ?? '',
      noProxy: env.no_proxy ?? env.NO_PROXY ?? '',
    };
    try {
      // `connect` for direct connections, `requestTls` for those tunnelled through the proxy.
      return new EnvHttpProxyAgent({
        ...proxy,
        ...(tls === undefined ? {} : { connect: tls, requestTls: tls }),
      });
    } catch {
      // Not kept as the cause: it quotes the URL, which may carry the proxy's user:password@.
      const names = PROXY_VARIABLES.filter((name) => env[name] !== undefined).join(', ');
      throw new ConfigurationError(`${names}: not a valid proxy URL (expected http://host:port)`, {
        field: names,
      });
    }
  }
}

/** The TLS material as one comparable value; kept in memory only, never shown. */
function identityOf(tls: BankingTls | undefined): string {
  return tls === undefined
    ? ''
    : JSON.stringify([tls.clientCertificate, tls.clientKey, tls.clientKeyPassphrase, tls.caCertificate]);
}
