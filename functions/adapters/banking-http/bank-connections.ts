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
 * requests in flight are done. At the end of a run's work (`endOfWork`), connections a request is
 * still stuck on (a proxy that never answers CONNECT, say) are destroyed, so a warm invocation
 * opens new ones; `destroy()` closes everything at once (the CLI at exit). Connection attempts
 * after failures are paced, and the tunnel's failures named (`proxy-tunnel.ts`).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { buildConnector, type Dispatcher, EnvHttpProxyAgent } from 'undici';
import { ConfigurationError } from '../../core/errors.ts';
import type { BankingCredentials, BankingTls } from '../../core/ports.ts';
import { type ClientCertificateInfo, checkBankTls, checkValidity } from './client-certificate.ts';
import { ConnectGate, gatedConnector, tunnelClientFactory } from './proxy-tunnel.ts';
import { requestsInFlight } from './upstream-request.ts';

/** How long `endOfWork` lets requests just aborted settle before taking them for stuck. */
const SETTLE_GRACE_MS = 200;
const SETTLE_CHECK_MS = 10;

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
  readonly gate: ConnectGate;
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
      const gate = new ConnectGate(this.#clock);
      current = {
        identity,
        dispatcher: this.#build(checked?.options, gate),
        gate,
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

  /** Closes the connections once their requests are done (tests). */
  async close(): Promise<void> {
    const current = this.#current;
    this.#current = undefined;
    await current?.dispatcher.close();
  }

  /**
   * Closes every connection now, requests in flight included (the CLI at exit): nothing a
   * misbehaving bank or proxy holds open keeps the process alive. The next request opens new ones.
   */
  async destroy(): Promise<void> {
    const current = this.#current;
    this.#current = undefined;
    if (current === undefined) return;
    current.gate.close();
    await current.dispatcher.destroy().catch(() => undefined);
  }

  /**
   * Called when a run's work is over (every request of it aborted or done): when a request is still
   * in flight on these connections a moment later, it is stuck (undici acts on an abort only once
   * a request has a connection, so one waiting for a tunnel or a connection can outlive its run),
   * and the connections are destroyed: the next run, a warm invocation, opens new ones rather than
   * queue behind it or inherit it. Idle connections stay open for reuse.
   * @returns whether the connections were destroyed.
   */
  async endOfWork(): Promise<boolean> {
    const current = this.#current;
    if (current === undefined) return false;
    for (let waited = 0; requestsInFlight(current.dispatcher) > 0; waited += SETTLE_CHECK_MS) {
      if (waited >= SETTLE_GRACE_MS) {
        if (this.#current === current) await this.destroy();
        return true;
      }
      await delay(SETTLE_CHECK_MS);
    }
    return false;
  }

  #build(tls: object | undefined, gate: ConnectGate): Dispatcher {
    const env = this.#environment;
    // Read here, in undici's order, so `environment` is the only source ("" means none).
    const proxy = {
      httpProxy: '',
      httpsProxy: env.https_proxy ?? env.HTTPS_PROXY ?? '',
      noProxy: env.no_proxy ?? env.NO_PROXY ?? '',
    };
    const variable = PROXY_VARIABLES.find((name) => env[name] !== undefined) ?? 'HTTPS_PROXY';
    try {
      // `connect` for direct connections, `requestTls` for those tunnelled through the proxy, whose
      // client (`clientFactory`) opens the tunnels; both pass through the gate.
      return new EnvHttpProxyAgent({
        ...proxy,
        connect: gatedConnector(buildConnector({ ...tls }), gate),
        clientFactory: tunnelClientFactory(variable, gate),
        ...(tls === undefined ? {} : { requestTls: tls }),
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
