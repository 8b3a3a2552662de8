/**
 * Realistic event content for one program, with no I/O: account lifecycles that never make an
 * impossible move, transactions between addresses the feed has introduced, and a small share of
 * event types the interface does not list (which the poller must tolerate).
 */
import { formatTimestamp, type RawEvent } from './raw-event.ts';
import type { Random } from './seeded-random.ts';

export type AccountStatus = 'PENDING' | 'OPEN' | 'FROZEN' | 'CLOSED';
const ACCOUNT_STATUSES: readonly AccountStatus[] = ['PENDING', 'OPEN', 'FROZEN', 'CLOSED'];

/** PENDING → OPEN → (FROZEN ↔ OPEN)* → CLOSED. Exported so tests can check every walk against it. */
export const ACCOUNT_TRANSITIONS: Readonly<Record<AccountStatus, readonly AccountStatus[]>> = {
  PENDING: ['OPEN'],
  OPEN: ['FROZEN', 'CLOSED'],
  FROZEN: ['OPEN'],
  CLOSED: [],
};

export const TRANSACTION_TYPES = ['card', 'fee', 'inbound', 'intra', 'outbound', 'system'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

/** Types the interface does not document; the feed carries them anyway, as the interface warns. */
export const UNKNOWN_EVENT_TYPES = ['CARD_STATUS', 'PROFILE_STATUS'] as const;

/** Share of account_status among the documented types (30 : 67 of the whole mix). */
const ACCOUNT_STATUS_SHARE = 30 / 97;

const MERCHANTS = [
  'Blue Bottle Coffee',
  'Whole Foods Market',
  'Shell',
  'Amazon Marketplace',
  'Uber Trip',
  'Corner Hardware',
  'City Parking',
  'Netflix',
] as const;
const BANKS = ['Chase', 'Bank of America', 'Wells Fargo', 'Citibank', 'Ally Bank', 'Capital One'] as const;
const INTRA_NOTES = ['Peer-to-peer transfer', 'Rent share', 'Dinner split', 'Savings top-up'] as const;
const SYSTEM_NOTES = ['Interest payment', 'Promotional credit', 'Balance adjustment'] as const;

/** What the generator produces; the feed adds the sequence number and program id. */
export interface EventDraft {
  readonly id: string;
  readonly created_dt: string;
  readonly type: string;
  readonly data: Record<string, unknown>;
}

interface Account {
  readonly id: string;
  readonly address: string;
  readonly cardId: string;
  status: AccountStatus;
  /** Position in its status list, so moving between lists is O(1) even with 100k accounts. */
  slot: number;
}

/** Accounts grouped by status, so "a random OPEN account" is a constant-time draw. */
class AccountBook {
  private readonly byStatus: Record<AccountStatus, Account[]> = {
    PENDING: [],
    OPEN: [],
    FROZEN: [],
    CLOSED: [],
  };
  private readonly byId = new Map<string, Account>();

  count(status: AccountStatus): number {
    return this.byStatus[status].length;
  }

  at(status: AccountStatus, index: number): Account {
    return this.byStatus[status][index]!;
  }

  get(id: string): Account | undefined {
    return this.byId.get(id);
  }

  add(account: Omit<Account, 'slot'>): Account {
    const list = this.byStatus[account.status];
    const added: Account = { ...account, slot: list.length };
    list.push(added);
    this.byId.set(added.id, added);
    return added;
  }

  move(account: Account, status: AccountStatus): void {
    const from = this.byStatus[account.status];
    const last = from.pop()!;
    if (last !== account) {
      from[account.slot] = last;
      last.slot = account.slot;
    }
    const to = this.byStatus[status];
    account.status = status;
    account.slot = to.length;
    to.push(account);
  }
}

export interface EventGeneratorOptions {
  /** A stream of its own, so that this program's data does not depend on anything else. */
  readonly random: Random;
  /** Share of events with an undocumented type, in [0, 1]. */
  readonly unknownTypeRatio: number;
  /** Epoch milliseconds, for `created_dt` and the transaction timestamps. */
  readonly now: () => number;
}

/**
 * Generates the events of one program and keeps the state that makes them consistent.
 *
 * @example
 * const generator = new EventGenerator({ random: createRandom(1), unknownTypeRatio: 0.03, now: Date.now });
 * generator.next();                 // a mix of types
 * generator.next('transaction');    // a forced type (any case)
 */
export class EventGenerator {
  private readonly accounts = new AccountBook();
  private readonly random: Random;
  private readonly unknownTypeRatio: number;
  private readonly now: () => number;
  /** The program's own accounts: they predate the feed, never change status and never appear in account_status. */
  private readonly systemAddress: string;
  private readonly settlementAddress: string;
  /** One gateway address per bank, so a bank's name and address stay consistent across transactions. */
  private readonly bankAddresses: ReadonlyMap<string, string>;

  constructor(options: EventGeneratorOptions) {
    this.random = options.random;
    this.unknownTypeRatio = options.unknownTypeRatio;
    this.now = options.now;
    this.systemAddress = this.address();
    this.settlementAddress = this.address();
    this.bankAddresses = new Map(BANKS.map((bank) => [bank, this.address()]));
  }

  /** The next event; `type` (any case) forces its type, otherwise the configured mix applies. */
  next(type?: string): EventDraft {
    const chosen = type === undefined ? this.chooseType() : type.toUpperCase();
    switch (chosen) {
      case 'ACCOUNT_STATUS':
        return this.draft(chosen, this.accountStatusData());
      case 'TRANSACTION':
        return this.draft(chosen, this.transactionData());
      case 'CARD_STATUS':
        return this.draft(chosen, this.cardStatusData());
      case 'PROFILE_STATUS':
        return this.draft(chosen, {
          profile_id: this.random.uuid(),
          status: this.random.pick(['ACTIVE', 'UNDER_REVIEW', 'SUSPENDED']),
        });
      default:
        return this.draft(chosen, { reference_id: this.random.uuid() });
    }
  }

  /** A fresh event id from this program's stream (for events appended without one). */
  nextId(): string {
    return this.random.uuid();
  }

  /**
   * Learns from an event appended by hand, so later generated events continue from it (an
   * account it opens can transact). It does not judge the transition: tests may append odd ones.
   */
  observe(event: Pick<RawEvent, 'type' | 'data'>): void {
    if (event.type.toUpperCase() !== 'ACCOUNT_STATUS') return;
    const { account_id: accountId, blockchain_address: address, status } = event.data;
    if (typeof accountId !== 'string' || !ACCOUNT_STATUSES.includes(status as AccountStatus)) return;
    const known = this.accounts.get(accountId);
    if (known !== undefined) {
      if (known.status !== status) this.accounts.move(known, status as AccountStatus);
      return;
    }
    this.accounts.add({
      id: accountId,
      address: typeof address === 'string' ? address : this.address(),
      cardId: this.random.uuid(),
      status: status as AccountStatus,
    });
  }

  private chooseType(): string {
    if (this.random.chance(this.unknownTypeRatio)) return this.random.pick(UNKNOWN_EVENT_TYPES);
    // Until two accounts are open, transactions would have nobody to move money between.
    if (this.accounts.count('OPEN') < 2) return 'ACCOUNT_STATUS';
    return this.random.chance(ACCOUNT_STATUS_SHARE) ? 'ACCOUNT_STATUS' : 'TRANSACTION';
  }

  private draft(type: string, data: Record<string, unknown>): EventDraft {
    return { id: this.random.uuid(), created_dt: formatTimestamp(this.now()), type, data };
  }

  private address(): string {
    return `0x${this.random.hex(40)}`;
  }

  /** Opens a pending account, creates a new one, or moves an active one along its lifecycle. */
  private accountStatusData(): Record<string, unknown> {
    const pending = this.accounts.count('PENDING');
    const open = this.accounts.count('OPEN');
    const frozen = this.accounts.count('FROZEN');
    let account: Account;
    if (pending > 0 && this.random.chance(0.6)) {
      account = this.accounts.at('PENDING', this.random.int(0, pending - 1));
      this.accounts.move(account, 'OPEN');
    } else if (open + frozen === 0 || this.random.chance(0.35)) {
      account = this.accounts.add({
        id: this.random.uuid(),
        address: this.address(),
        cardId: this.random.uuid(),
        status: 'PENDING',
      });
    } else {
      const index = this.random.int(0, open + frozen - 1);
      account = index < open ? this.accounts.at('OPEN', index) : this.accounts.at('FROZEN', index - open);
      // Closing is rarer than freezing, and never takes the pool below three open accounts, so
      // transactions keep flowing.
      const mayClose = open > 3 && this.random.chance(0.2);
      const next: AccountStatus = account.status === 'FROZEN' ? 'OPEN' : mayClose ? 'CLOSED' : 'FROZEN';
      this.accounts.move(account, next);
    }
    return { account_id: account.id, blockchain_address: account.address, status: account.status };
  }

  private randomOpenAccount(except?: Account): Account {
    const open = this.accounts.count('OPEN');
    if (except === undefined) return this.accounts.at('OPEN', this.random.int(0, open - 1));
    // Draw among the others by skipping over the excluded slot.
    const index = this.random.int(0, open - 2);
    return this.accounts.at('OPEN', index >= except.slot ? index + 1 : index);
  }

  private transactionData(): Record<string, unknown> {
    const open = this.accounts.count('OPEN');
    // With no open customer account (a forced type on a fresh program), only the program's own
    // accounts can move money: a system transfer to the settlement account.
    const type: TransactionType =
      open === 0
        ? 'system'
        : this.random.weighted<TransactionType>([
            ['card', 35],
            ['intra', open >= 2 ? 20 : 0],
            ['inbound', 15],
            ['outbound', 10],
            ['fee', 15],
            ['system', 5],
          ]);
    const account = open === 0 ? undefined : this.randomOpenAccount();
    const accountAddress = account?.address ?? this.settlementAddress;
    let from: string;
    let to: string;
    let amount: number;
    let note: string;
    let cardId: string | undefined;
    switch (type) {
      case 'card':
        from = accountAddress;
        to = this.settlementAddress;
        amount = this.random.int(100, 25_000);
        note = this.random.pick(MERCHANTS);
        cardId = account?.cardId;
        break;
      case 'fee':
        from = accountAddress;
        to = this.systemAddress;
        amount = this.random.int(1, 150);
        note = 'Blockchain network fee';
        break;
      case 'inbound': {
        const bank = this.random.pick(BANKS);
        from = this.bankAddresses.get(bank)!;
        to = accountAddress;
        amount = this.random.int(1_000, 500_000);
        note = bank;
        break;
      }
      case 'outbound': {
        const bank = this.random.pick(BANKS);
        from = accountAddress;
        to = this.bankAddresses.get(bank)!;
        amount = this.random.int(1_000, 300_000);
        note = bank;
        break;
      }
      case 'intra':
        from = accountAddress;
        to = this.randomOpenAccount(account).address;
        amount = this.random.int(500, 100_000);
        note = this.random.pick(INTRA_NOTES);
        break;
      case 'system':
        from = this.systemAddress;
        to = accountAddress;
        amount = this.random.int(1, 10_000);
        note = this.random.pick(SYSTEM_NOTES);
        break;
    }
    const status = this.random.weighted([
      ['PENDING', 20],
      ['COMPLETE', 75],
      ['ERROR', 5],
    ] as const);
    const now = this.now();
    // A settled transaction was created a little before the event that reports it.
    const createdMs = status === 'PENDING' ? now : now - this.random.int(1_000, 120_000);
    return {
      transaction_id: this.random.uuid(),
      from_address: from,
      to_address: to,
      amount,
      type,
      status,
      network_fee: type === 'fee' ? 0 : this.random.int(0, 5),
      note,
      ...(cardId === undefined ? {} : { card_id: cardId }),
      created_dt: formatTimestamp(createdMs),
      updated_dt: formatTimestamp(now),
    };
  }

  private cardStatusData(): Record<string, unknown> {
    const open = this.accounts.count('OPEN');
    const account = open === 0 ? undefined : this.randomOpenAccount();
    return {
      card_id: account?.cardId ?? this.random.uuid(),
      account_id: account?.id ?? this.random.uuid(),
      last_four: this.random.int(0, 9999).toString().padStart(4, '0'),
      status: this.random.pick(['ACTIVE', 'LOCKED', 'TERMINATED']),
    };
  }
}
