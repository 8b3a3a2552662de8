import { parseBaseUrl } from '../../core/banking-credentials.ts';
import type { BankingCredentials, CredentialsProvider } from '../../core/ports.ts';

/**
 * Credentials given directly (local mode: the embedded simulator, or `BANKING_*` environment
 * variables). `refresh` returns the same values: there is no store to re-read.
 */
export class StaticCredentialsProvider implements CredentialsProvider {
  readonly #credentials: BankingCredentials;

  constructor(credentials: BankingCredentials, where = 'local credentials') {
    this.#credentials = Object.freeze({ ...credentials, baseUrl: parseBaseUrl(credentials.baseUrl, where) });
  }

  async get(): Promise<BankingCredentials> {
    return this.#credentials;
  }

  async refresh(): Promise<BankingCredentials> {
    return this.#credentials;
  }
}
