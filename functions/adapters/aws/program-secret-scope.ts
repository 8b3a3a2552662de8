/**
 * Which secrets a program record may name: those of the deployment alone. The function's role may
 * read the secrets whose names start with the deployment's prefix (`SECRETS_PREFIX`, an IAM
 * resource `arn:…:secret:<prefix>*`) and the secrets its stack was given (`SECRET_ID`,
 * `PROGRAM_SECRETS`); a record naming any other is refused before it is read, with a named error,
 * so that a record copied from another deployment, or edited by hand, never points this function
 * at credentials that are not its own (IAM would refuse the read too: this says why, by name).
 *
 * Secrets Manager names are flat: a `/` has no meaning to it nor to IAM, whose `*` matches any
 * rest. So "under the prefix" is a plain prefix of the name, as IAM reads it, and the prefix must
 * end with `/`, or `bep/Prod` would also cover `bep/Production…`.
 */
import { ProgramSecretRefusedError } from '../../core/errors.ts';

/** Secrets Manager's name characters; a prefix ends with `/` and leaves room for a program name (64). */
export const SECRETS_PREFIX_PATTERN = /^[A-Za-z0-9_+=.@-][A-Za-z0-9/_+=.@-]{0,446}\/$/;
export const SECRETS_PREFIX_EXPECTED =
  'a secret name path: letters, digits and "/_+=.@-", ending with "/", at most 448 characters';

/** `arn:<partition>:secretsmanager:<region>:<account>:secret:<name>-<6 characters>`. */
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:([a-z0-9-]+):(\d{12}):secret:(.+)-[A-Za-z0-9]{6}$/;

/**
 * The name `secret set --program` writes a program's credentials to.
 *
 * @example
 * programSecretName('banking-events-poller/Prod/', 'cards'); // 'banking-events-poller/Prod/cards'
 */
export function programSecretName(prefix: string, program: string): string {
  return `${prefix}${program}`;
}

export interface ProgramSecretScopeOptions {
  /** `SECRETS_PREFIX`; `undefined`: only the stack's own secrets. */
  readonly prefix: string | undefined;
  /** The secrets of the stack's programs (`SECRET_ID`, `PROGRAM_SECRETS`), as ids or ARNs. */
  readonly stackSecrets: Iterable<string>;
  /** The function's region (`AWS_REGION`): an ARN of another region is not the deployment's. */
  readonly region?: string;
}

export class ProgramSecretScope {
  readonly #prefix: string | undefined;
  readonly #stackSecrets: ReadonlySet<string>;
  readonly #region: string | undefined;

  constructor(options: ProgramSecretScopeOptions) {
    this.#prefix = options.prefix;
    this.#stackSecrets = new Set(options.stackSecrets);
    this.#region = options.region;
  }

  /** Whether `secretId` (a name or an ARN) is one of the deployment's secrets. */
  includes(secretId: string): boolean {
    if (this.#stackSecrets.has(secretId)) return true;
    if (this.#prefix === undefined) return false;
    const arn = SECRET_ARN.exec(secretId);
    if (arn === null) return secretId.startsWith(this.#prefix) && secretId.length > this.#prefix.length;
    const [, region, , name] = arn as unknown as [string, string, string, string];
    if (this.#region !== undefined && region !== this.#region) return false;
    return name.startsWith(this.#prefix) && name.length > this.#prefix.length;
  }

  /**
   * Returns `secretId` when it is one of the deployment's secrets.
   *
   * @throws ProgramSecretRefusedError naming the program (never the secret's id).
   */
  check(program: string, secretId: string): string {
    if (!this.includes(secretId)) throw new ProgramSecretRefusedError(program, this.#prefix);
    return secretId;
  }
}
