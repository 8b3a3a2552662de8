import { describe, expect, it } from 'vitest';
import { networkError } from '../../../../functions/adapters/banking-http/upstream-request.ts';

const TOKEN = { method: 'POST', path: '/oauth2/token' } as const;
const failure = (code: string) => Object.assign(new Error(`socket failed: ${code}`), { code });

describe('networkError', () => {
  it('keeps a reset or closed connection retryable', () => {
    const error = networkError(failure('ECONNRESET'), TOKEN);

    expect(error).toMatchObject({ retryable: true, context: { errorCode: 'ECONNRESET' } });
  });

  it('does not retry a server certificate the client does not trust, and points at ca_certificate', () => {
    const error = networkError(failure('SELF_SIGNED_CERT_IN_CHAIN'), TOKEN);

    expect(error).toMatchObject({ retryable: false, context: { errorCode: 'SELF_SIGNED_CERT_IN_CHAIN' } });
    expect(error.message).toContain('ca_certificate');
  });

  it('does not retry a TLS alert from the server, and points at client_certificate', () => {
    const error = networkError(failure('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA'), TOKEN);

    expect(error).toMatchObject({
      retryable: false,
      context: { errorCode: 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA' },
    });
    expect(error.message).toContain('client_certificate');
  });

  it('says what a closed connection may mean when a client certificate was presented, still retryable', () => {
    const plain = networkError(failure('UND_ERR_SOCKET'), TOKEN);
    const withCertificate = networkError(failure('UND_ERR_SOCKET'), TOKEN, { clientCertificate: true });

    expect(plain.message).not.toContain('client_certificate');
    expect(withCertificate.message).toContain('client_certificate');
    expect(withCertificate.retryable).toBe(true);
  });
});
