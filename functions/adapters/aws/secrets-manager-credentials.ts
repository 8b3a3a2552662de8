/**
 * Banking-service credentials from AWS Secrets Manager, cached across warm invocations.
 *
 * Ours rather than Powertools Parameters' `getSecret` (docs/decisions/hand-written-secret-cache.md):
 * it caches the parsed, checked credentials rather than the text, lets concurrent reads and 401
 * refreshes share one `GetSecretValue`, and never quotes the secret in an error.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { parseBankingCredentials } from '../../core/banking-credentials.ts';
import { ConfigurationError } from '../../core/errors.ts';
import type { BankingCredentials, CredentialsProvider } from '../../core/ports.ts';

export interface SecretsManagerCredentialsProviderOptions {
  /** Name or ARN of the secret holding `{"base_url", "client_id", "client_secret"}`. */
  readonly secretId: string;
  /**
   * Build it once per container at module scope and pass it in.
   * @default a new `SecretsManagerClient` with the SDK's default configuration
   */
  readonly client?: SecretsManagerClient;
  /**
   * How long a read stays fresh; after that the next `get()` reads the secret again.
   * @default 300_000 (5 minutes)
   */
  readonly ttlMs?: number;
  /**
   * Epoch milliseconds, injectable for tests.
   * @default Date.now
   */
  readonly clock?: () => number;
  /**
   * Where reads are kept, keyed by secret id. The default lives at module scope, so a provider
   * created per invocation still reuses what the previous invocation in this container read.
   * @default a module-level cache shared by all providers
   */
  readonly cache?: CredentialsCache;
}

/** One secret's last read and the read in progress, if any. */
export interface CachedSecret {
  credentials?: BankingCredentials;
  /** Clock time when the read that produced `credentials` started. */
  readAt?: number;
  inFlight?: Promise<BankingCredentials>;
}

export type CredentialsCache = Map<string, CachedSecret>;

const sharedCache: CredentialsCache = new Map();

/** Error names that mean "the deployment is wrong", not "try again": they name the secret, never its value. */
const CONFIGURATION_ERRORS: Readonly<Record<string, string>> = {
  ResourceNotFoundException: 'does not exist (check the secret id and region)',
  AccessDeniedException: 'cannot be read: the function role lacks secretsmanager:GetSecretValue',
  DecryptionFailure: 'cannot be decrypted: the function role lacks kms:Decrypt on its key',
  InvalidRequestException: 'cannot be read in its current state (is it scheduled for deletion?)',
};

/**
 * Reads and validates the banking credentials secret, caching the parsed value for `ttlMs`.
 * Concurrent `get()` and `refresh()` calls share one in-flight `GetSecretValue`.
 *
 * @example
 * const secretsManager = new SecretsManagerClient({}); // module scope
 * const credentials = new SecretsManagerCredentialsProvider({ client: secretsManager, secretId: config.secretArn });
 * const { baseUrl } = await credentials.get();
 */
export class SecretsManagerCredentialsProvider implements CredentialsProvider {
  readonly #client: SecretsManagerClient;
  readonly #secretId: string;
  readonly #ttlMs: number;
  readonly #clock: () => number;
  readonly #cache: CredentialsCache;

  constructor(options: SecretsManagerCredentialsProviderOptions) {
    this.#client = options.client ?? new SecretsManagerClient({});
    this.#secretId = options.secretId;
    this.#ttlMs = options.ttlMs ?? 5 * 60_000;
    this.#clock = options.clock ?? Date.now;
    this.#cache = options.cache ?? sharedCache;
  }

  async get(): Promise<BankingCredentials> {
    const slot = this.#slot();
    if (
      slot.credentials !== undefined &&
      slot.readAt !== undefined &&
      this.#clock() - slot.readAt < this.#ttlMs
    ) {
      return slot.credentials;
    }
    return slot.inFlight ?? this.#read(slot);
  }

  /**
   * Reads the secret again whatever its age (after a 401: it may have been rotated). A read that
   * is already in flight started after the cached value was read, so it is joined, not repeated.
   */
  async refresh(): Promise<BankingCredentials> {
    const slot = this.#slot();
    return slot.inFlight ?? this.#read(slot);
  }

  #slot(): CachedSecret {
    let slot = this.#cache.get(this.#secretId);
    if (slot === undefined) {
      slot = {};
      this.#cache.set(this.#secretId, slot);
    }
    return slot;
  }

  #read(slot: CachedSecret): Promise<BankingCredentials> {
    const startedAt = this.#clock();
    // A failed read leaves the cache as it was; the next call tries again.
    const read = this.#fetch().then((credentials) => {
      slot.credentials = credentials;
      slot.readAt = startedAt;
      return credentials;
    });
    slot.inFlight = read;
    const clear = (): void => {
      if (slot.inFlight === read) slot.inFlight = undefined;
    };
    read.then(clear, clear);
    return read;
  }

  async #fetch(): Promise<BankingCredentials> {
    const where = `secret ${this.#secretId}`;
    let secretString: string | undefined;
    try {
      const output = await this.#client.send(new GetSecretValueCommand({ SecretId: this.#secretId }));
      secretString = output.SecretString;
    } catch (error) {
      const name = error instanceof Error ? error.name : undefined;
      const problem = name === undefined ? undefined : CONFIGURATION_ERRORS[name];
      if (problem !== undefined) {
        throw new ConfigurationError(
          `${where} ${problem}`,
          { secretId: this.#secretId, awsError: name },
          error,
        );
      }
      throw error;
    }
    return parseBankingCredentials(secretString, where);
  }
}
