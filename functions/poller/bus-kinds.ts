/**
 * What the handler does differently for each kind of bus (`EVENT_BUS_KIND`), in one place: how
 * `EVENT_BUS_NAME` addresses the bus, which publisher a program's events go through, and what
 * the bus refuses in an entry (the feed quarantines by it). The configuration reads the address
 * here (`poller-config.ts`), the handler builds the publishers and the feeds' rules here once per
 * container (the operator's bank check too); nothing else looks at the kind. The publishers are adapters
 * (`adapters/aws/`).
 */
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { CLASSIC_BUS_ENTRY_RULES, CUSTOM_BUS_ENTRY_RULES } from '../adapters/aws/eventbridge-entry-rules.ts';
import { EventBridgePublisher } from '../adapters/aws/eventbridge-publisher.ts';
import { CustomBusPublisher } from '../adapters/aws/eventbridgev2/custom-bus-publisher.ts';
import { parseEventBusV2Arn } from '../adapters/aws/eventbridgev2/event-bus-arn.ts';
import { EventBridgeV2Rpc } from '../adapters/aws/eventbridgev2/rpc-v2-cbor-client.ts';
import type { BusEntryRules } from '../core/bus-entry-rules.ts';
import type { EventPublisher } from '../core/ports.ts';
import type { EnvironmentValues } from '../settings/environment.ts';

/** What the publishers are built from: the configuration (`PollerConfig`) has all of it. */
export type BusConfig = Pick<
  EnvironmentValues,
  'eventBus' | 'eventSource' | 'maxEventEntryBytes' | 'defaultProgram' | 'eventGroupBy'
> & {
  /** The function's own programs (`PROGRAM_SECRETS`). */
  readonly programSecrets: ReadonlyMap<string, string>;
};

/** The bus for a program's events. */
export type BusPublishers = (program: string) => EventPublisher;

export interface HandlerBusKind {
  /**
   * `EVENT_BUS_NAME` as this kind addresses its bus.
   *
   * @throws ConfigurationError naming the variable and the expected form
   */
  address(value: string): string;
  /** What the bus refuses in an entry: the publishers state it too, and the feed quarantines by it. */
  readonly entryRules: BusEntryRules;
  /** The publishers, over `client` (it supplies credentials, region and endpoint to hand-signed requests). */
  publishers(config: BusConfig, client: EventBridgeClient): BusPublishers;
}

export const HANDLER_BUS_KINDS: Readonly<Record<EnvironmentValues['eventBusKind'], HandlerBusKind>> =
  Object.freeze({
    /** A name, or an ARN for a bus of another account. The bus needs no program: one publisher serves all. */
    classic: {
      address: (value) => value,
      entryRules: CLASSIC_BUS_ENTRY_RULES,
      publishers(config, client) {
        const classic = new EventBridgePublisher({
          client,
          eventBusName: config.eventBus,
          source: config.eventSource,
          maxRequestBytes: config.maxEventEntryBytes,
        });
        return () => classic;
      },
    },
    /**
     * Its API addresses a bus by its ARN only. The program names the event group
     * (`EVENT_GROUP_BY`), so each program has its own view of one publisher, over one signed client.
     */
    custom: {
      address: (value) => parseEventBusV2Arn(value, 'Environment variable EVENT_BUS_NAME', 'EVENT_BUS_NAME'),
      entryRules: CUSTOM_BUS_ENTRY_RULES,
      publishers(config, client) {
        const custom = new CustomBusPublisher({
          rpc: new EventBridgeV2Rpc({ client }),
          eventBusArn: config.eventBus,
          source: config.eventSource,
          program: config.defaultProgram,
          groupBy: config.eventGroupBy,
          maxRequestBytes: config.maxEventEntryBytes,
        });
        const views = new Map<string, CustomBusPublisher>([[config.defaultProgram, custom]]);
        return (program) => {
          let view = views.get(program);
          if (view === undefined) {
            view = custom.forProgram(program);
            // Only the function's own programs are kept: an operator request may name another (refused later).
            if (config.programSecrets.has(program)) views.set(program, view);
          }
          return view;
        };
      },
    },
  });
