import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  readJsonBody,
  summarizeErrorBody,
} from '../../../../functions/adapters/banking-http/response-body.ts';
import { WITHHELD } from '../../../../functions/adapters/secret-redaction.ts';
import { PayloadValidationError } from '../../../../functions/core/errors.ts';

const origin = { source: 'GET /events', status: 200 };

async function* chunks(...parts: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield part;
}

/** Splits `bytes` at the given offsets, e.g. in the middle of a multibyte character. */
function split(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const cuts = [0, ...offsets, bytes.byteLength];
  return cuts.slice(1).map((end, index) => bytes.subarray(cuts[index], end));
}

describe('readJsonBody', () => {
  it('decodes multibyte characters split across uneven chunks', async () => {
    const value = { note: 'Café ☕ 😀 Zürich' };
    const bytes = new TextEncoder().encode(JSON.stringify(value));
    const offsets = [1, 12, 13, 17, 18, 19, 22];

    await expect(readJsonBody(chunks(...split(bytes, offsets)), { origin, maxBytes: 1000 })).resolves.toEqual(
      {
        text: JSON.stringify(value),
        value,
      },
    );
  });

  it('gives undefined for an empty body', async () => {
    await expect(readJsonBody(chunks(), { origin, maxBytes: 10 })).resolves.toBeUndefined();
  });

  it('rejects invalid UTF-8 instead of replacing it', async () => {
    const bytes = Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]);

    await expect(readJsonBody(chunks(bytes), { origin, maxBytes: 100 })).rejects.toThrow(
      'GET /events (HTTP 200): body is not valid UTF-8',
    );
  });

  it('rejects a body that is not JSON, naming the source and status', async () => {
    const error = await readJsonBody(chunks(new TextEncoder().encode('<html>')), {
      origin,
      maxBytes: 100,
    }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(PayloadValidationError);
    expect((error as Error).message).toBe('GET /events (HTTP 200): body is not JSON');
  });

  it('keeps the body out of the error entirely, cause included (it may hold a token)', async () => {
    // V8's message for this quotes its start: Unexpected token 'o', "tok_LIVE_9f"... is not valid JSON
    const body = 'tok_LIVE_9f8e7d6c5b4a';
    const error = await readJsonBody(chunks(new TextEncoder().encode(body)), {
      origin,
      maxBytes: 1_000,
    }).catch((caught: unknown) => caught);

    expect(inspect(error, { depth: 5 })).not.toContain('tok_LIVE');
  });

  it('rejects a body larger than the limit while streaming', async () => {
    const parts = [new Uint8Array(60).fill(0x20), new Uint8Array(60).fill(0x20)];

    await expect(readJsonBody(chunks(...parts), { origin, maxBytes: 100 })).rejects.toThrow(
      'body is larger than 100 bytes',
    );
  });

  it('rejects a declared Content-Length over the limit before reading', async () => {
    let destroyed = false;
    const body = Object.assign(chunks(), { destroy: () => (destroyed = true) });

    await expect(readJsonBody(body, { origin, maxBytes: 100, contentLength: '101' })).rejects.toThrow(
      PayloadValidationError,
    );
    expect(destroyed).toBe(true);
  });
});

describe('summarizeErrorBody', () => {
  it('takes the OAuth error and a short description', () => {
    const body = '{"error":"invalid_client","error_description":"Client authentication failed"}';

    expect(summarizeErrorBody(body, [])).toBe('invalid_client (Client authentication failed)');
  });

  it('shortens a long description', () => {
    const body = JSON.stringify({ error: 'invalid_request', error_description: 'x'.repeat(500) });

    const summary = summarizeErrorBody(body, []);

    expect(summary?.startsWith('invalid_request (xxx')).toBe(true);
    expect(summary?.length).toBeLessThan(250);
  });

  it('reads the description of a problem document (detail)', () => {
    expect(summarizeErrorBody('{"title":"Unauthorized","detail":"bad credentials"}', [])).toBe(
      '(bad credentials)',
    );
  });

  it('reads a nested error object', () => {
    expect(summarizeErrorBody('{"error":{"code":"RATE_LIMITED","message":"slow down"}}', [])).toBe(
      'RATE_LIMITED (slow down)',
    );
  });

  it('does not quote a body that is not a JSON object', () => {
    for (const body of [
      '<html>\r\n<b>Bad\tGateway</b>',
      'upstream connect error',
      '["an","array"]',
      '"text"',
    ]) {
      const summary = summarizeErrorBody(body, []);

      expect(summary).toMatch(/^body not shown/);
      expect(summary).not.toMatch(/Gateway|upstream|array|text/);
    }
  });

  it('does not quote a JSON object without a field it knows', () => {
    expect(summarizeErrorBody('{"note":"something else"}', [])).not.toContain('something');
  });

  it('gives undefined for an empty body', () => {
    expect(summarizeErrorBody('  \n', [])).toBeUndefined();
  });

  it('redacts secrets, also when the body escapes them', () => {
    const body = '{"error":"invalid_client","error_description":"bad secret \\u00733cr3t"}';

    const summary = summarizeErrorBody(body, ['s3cr3t']);

    expect(summary).toBe('invalid_client (bad secret [redacted])');
  });

  it('withholds the whole summary when redaction fails, and does not throw', () => {
    const hostile = ['s3cr3t-value'] as unknown as string[];
    Object.defineProperty(hostile, Symbol.iterator, {
      value: () => {
        throw new Error('s3cr3t-value');
      },
    });

    expect(summarizeErrorBody('{"error":"invalid_client","detail":"s3cr3t-value"}', hostile)).toBe(WITHHELD);
  });
});
