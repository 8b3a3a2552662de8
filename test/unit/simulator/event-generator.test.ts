import { describe, expect, it } from 'vitest';
import {
  ACCOUNT_TRANSITIONS,
  type AccountStatus,
  type EventDraft,
  EventGenerator,
  TRANSACTION_TYPES,
  UNKNOWN_EVENT_TYPES,
} from '../../../functions/simulator/event-generator.ts';
import { createRandom } from '../../../functions/simulator/seeded-random.ts';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;
const ADDRESS = /^0x[0-9a-f]{40}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function generateMany(count: number, seed = 7, unknownTypeRatio = 0.03): EventDraft[] {
  const generator = new EventGenerator({ random: createRandom(seed), unknownTypeRatio, now: Date.now });
  return Array.from({ length: count }, () => generator.next());
}

describe('EventGenerator', () => {
  const events = generateMany(5_000);

  it('walks every account PENDING → OPEN → (FROZEN ↔ OPEN)* → CLOSED, never an impossible move', () => {
    const statuses = new Map<string, AccountStatus>();
    const seen = new Set<AccountStatus>();

    for (const event of events.filter((candidate) => candidate.type === 'ACCOUNT_STATUS')) {
      const {
        account_id: accountId,
        blockchain_address: address,
        status,
      } = event.data as {
        account_id: string;
        blockchain_address: string;
        status: AccountStatus;
      };
      expect(accountId).toMatch(UUID);
      expect(address).toMatch(ADDRESS);
      const previous = statuses.get(accountId);
      if (previous === undefined) expect(status).toBe('PENDING');
      else expect(ACCOUNT_TRANSITIONS[previous]).toContain(status);
      statuses.set(accountId, status);
      seen.add(status);
    }
    expect(seen).toEqual(new Set(['PENDING', 'OPEN', 'FROZEN', 'CLOSED']));
  });

  it('moves money only from and to accounts that are OPEN at that point of the feed', () => {
    const open = new Set<string>();
    const seenTypes = new Set<string>();

    for (const event of events) {
      const data = event.data as Record<string, unknown>;
      if (event.type === 'ACCOUNT_STATUS') {
        if (data.status === 'OPEN') open.add(data.blockchain_address as string);
        else open.delete(data.blockchain_address as string);
        continue;
      }
      if (event.type !== 'TRANSACTION') continue;
      const type = data.type as string;
      seenTypes.add(type);
      expect(TRANSACTION_TYPES).toContain(type);
      expect(Number.isInteger(data.amount) && (data.amount as number) > 0).toBe(true);
      expect(['PENDING', 'COMPLETE', 'ERROR']).toContain(data.status);
      expect(typeof data.note === 'string' && data.note.length > 0).toBe(true);
      expect(data.created_dt).toMatch(TIMESTAMP);
      expect(Date.parse(data.updated_dt as string)).toBeGreaterThanOrEqual(
        Date.parse(data.created_dt as string),
      );
      expect('card_id' in data).toBe(type === 'card');
      const customer = ['inbound', 'system'].includes(type) ? data.to_address : data.from_address;
      expect(open.has(customer as string)).toBe(true);
      if (type === 'intra') expect(open.has(data.to_address as string)).toBe(true);
      expect(data.from_address).not.toBe(data.to_address);
    }
    expect(seenTypes).toEqual(new Set(TRANSACTION_TYPES));
  });

  it('mixes roughly 30% account_status, 67% transaction and 3% undocumented types', () => {
    const share = (predicate: (type: string) => boolean) =>
      events.filter((event) => predicate(event.type)).length / events.length;

    expect(share((type) => type === 'ACCOUNT_STATUS')).toBeCloseTo(0.3, 1);
    expect(share((type) => type === 'TRANSACTION')).toBeCloseTo(0.67, 1);
    const unknown = share((type) => (UNKNOWN_EVENT_TYPES as readonly string[]).includes(type));
    expect(unknown).toBeGreaterThan(0.015);
    expect(unknown).toBeLessThan(0.045);
  });

  it('produces upper-case types, UUID ids and timestamps with an explicit offset', () => {
    for (const event of events) {
      expect(event.type).toMatch(/^[A-Z_]+$/);
      expect(event.id).toMatch(UUID);
      expect(event.created_dt).toMatch(TIMESTAMP);
    }
  });

  it('honours a forced type in any case, even on a fresh program', () => {
    const generator = new EventGenerator({ random: createRandom(1), unknownTypeRatio: 0, now: Date.now });

    const transaction = generator.next('transaction');
    const custom = generator.next('loan_status');

    expect(transaction.type).toBe('TRANSACTION');
    expect(transaction.data).toMatchObject({ type: 'system', amount: expect.any(Number) });
    expect(custom).toMatchObject({
      type: 'LOAN_STATUS',
      data: { reference_id: expect.stringMatching(UUID) },
    });
  });

  it('continues from an account appended by hand', () => {
    const generator = new EventGenerator({ random: createRandom(2), unknownTypeRatio: 0, now: Date.now });
    const address = `0x${'ab'.repeat(20)}`;

    generator.observe({
      type: 'ACCOUNT_STATUS',
      data: { account_id: 'manual', blockchain_address: address, status: 'OPEN' },
    });
    const transaction = generator.next('TRANSACTION');

    expect([transaction.data.from_address, transaction.data.to_address]).toContain(address);
  });
});
