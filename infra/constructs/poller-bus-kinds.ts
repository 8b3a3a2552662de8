/**
 * Each kind of bus (`eventBusKind`) and its strategy: the construct builds the one its props name,
 * once. A kind added to the settings table fails to compile here until it has a strategy.
 */
import { ClassicPollerBus } from './classic-poller-bus.ts';
import { CustomPollerBus } from './custom-poller-bus.ts';
import type { EventBusKind, PollerBusKind } from './poller-bus.ts';

export const POLLER_BUS_KINDS: Readonly<Record<EventBusKind, PollerBusKind>> = Object.freeze({
  classic: ClassicPollerBus,
  custom: CustomPollerBus,
});
