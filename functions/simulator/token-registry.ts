/**
 * Opaque bearer tokens, each scoped to one program, with an expiry and a global revocation switch
 * (the interface's "support deactivates access" case, used by tests of the 401 refresh path).
 */
import { randomBytes } from 'node:crypto';

export type TokenCheck =
  | { readonly valid: true; readonly programId: string }
  | { readonly valid: false; readonly reason: 'unknown' | 'expired' | 'revoked' };

interface IssuedToken {
  readonly programId: string;
  readonly expiresAt: number;
  /** Tokens issued before the latest `revokeAll` belong to an older generation. */
  readonly generation: number;
}

export class TokenRegistry {
  private readonly tokens = new Map<string, IssuedToken>();
  private generation = 0;
  private issuedCount = 0;

  constructor(
    private readonly lifetimeMs: number,
    private readonly now: () => number,
  ) {}

  get issued(): number {
    return this.issuedCount;
  }

  /** Every token handed out, so tests can prove none of them ever reached a log or a URL. */
  issuedTokens(): string[] {
    return [...this.tokens.keys()];
  }

  /**
   * A fresh token for `programId`. Tokens come from the system CSPRNG even when the simulator is
   * seeded: they are secrets in shape, and no test should be able to predict one.
   */
  issue(programId: string): string {
    const token = randomBytes(32).toString('base64url');
    this.tokens.set(token, {
      programId,
      expiresAt: this.now() + this.lifetimeMs,
      generation: this.generation,
    });
    this.issuedCount += 1;
    return token;
  }

  check(token: string): TokenCheck {
    const issued = this.tokens.get(token);
    if (issued === undefined) return { valid: false, reason: 'unknown' };
    if (issued.generation !== this.generation) return { valid: false, reason: 'revoked' };
    // The token is refused from its expiry instant on, as the interface promises after one hour.
    if (this.now() >= issued.expiresAt) return { valid: false, reason: 'expired' };
    return { valid: true, programId: issued.programId };
  }

  /** When `token` stops being valid, epoch ms; `-Infinity` for a token never issued. */
  expiresAt(token: string): number {
    return this.tokens.get(token)?.expiresAt ?? Number.NEGATIVE_INFINITY;
  }

  revokeAll(): void {
    this.generation += 1;
    // Forgetting them would read as "unknown"; keeping them lets the error say "revoked".
  }
}
