import { describe, expect, it } from 'vitest';
import { CycleBudget } from '../../../functions/core/cycle-budget.ts';
import { DeadlineExceededError } from '../../../functions/core/errors.ts';
import { FakeClock } from '../../support/fake-clock.ts';

describe('CycleBudget signals', () => {
  it('aborts the deadline signal at the soft deadline with DeadlineExceededError', () => {
    const clock = new FakeClock();
    const budget = new CycleBudget(clock, 10_000, 2_000);
    const signal = budget.deadlineSignal;

    clock.advance(7_999);
    expect(signal.aborted).toBe(false);
    clock.advance(1);

    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
    budget.dispose();
  });

  it('aborts every signal it handed out when the cycle ends before their deadlines', () => {
    const clock = new FakeClock();
    const budget = new CycleBudget(clock, 60_000, 0);
    const signals = [budget.deadlineSignal, budget.workSignal, budget.signalBeforeEnd(1_000)];

    budget.dispose();

    // A wait still holding one of them (a token request nobody awaits any more) ends now, not never.
    for (const signal of signals) {
      expect(signal.aborted).toBe(true);
      expect(signal.reason).toBeInstanceOf(DeadlineExceededError);
    }
    expect(clock.activeDeadlines).toBe(0);
  });

  it('keeps the reason of a signal that already fired', () => {
    const clock = new FakeClock();
    const budget = new CycleBudget(clock, 10_000, 2_000);
    const signal = budget.deadlineSignal;
    clock.advance(8_000);
    const reason: unknown = signal.reason;

    budget.dispose();

    expect(signal.reason).toBe(reason);
  });

  it('hands out signals already aborted after dispose, starting no timer', () => {
    const clock = new FakeClock();
    const budget = new CycleBudget(clock, 60_000, 0);
    budget.dispose();

    const late = budget.signalBeforeEnd(1_000);

    expect(late.aborted).toBe(true);
    expect(budget.deadlineSignal.aborted).toBe(true);
    expect(clock.activeDeadlines).toBe(0);
  });
});
