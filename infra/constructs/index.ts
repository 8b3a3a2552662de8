/**
 * The package's entry point (`import { BankingEventsPoller } from 'banking-events-poller'`): the
 * construct, its props types, the alarm-action strategies and the route options, and the parts
 * it exposes as public members. Nothing else in the package is public.
 */
export { ConfigurationError } from '../../functions/core/errors.ts';
export { AlarmActions, type IAlarmActionStrategy, type NotifySnsOptions } from './alarm-actions.ts';
export {
  BankingEventsPoller,
  type SubscriberGrant,
  type SubscriberGrantOptions,
} from './banking-events-poller.ts';
export {
  CustomBusRouting,
  type CustomBusRoutingProps,
  EVENT_GROUP_MESSAGE_GROUP_ID,
  type SubscriberRoute,
} from './custom-bus-routing.ts';
export { CustomEventBus, type CustomEventBusProps } from './custom-event-bus.ts';
export {
  type EventRouteOptions,
  EventRouting,
  type EventRoutingProps,
  type IRouteTargets,
  type Route,
  type RouteQueues,
  type RouteTargetOptions,
} from './event-routing.ts';
export { EventSchemas, type EventSchemasProps, eventJsonSchema, schemaName } from './event-schemas.ts';
export { PollerAlarms, type PollerAlarmsProps, type ProgramConditionAlarms } from './poller-alarms.ts';
export type { IPollerBus } from './poller-bus.ts';
export { PollerDashboard, type PollerDashboardProps } from './poller-dashboard.ts';
export {
  POLLER_SERVICE_NAME,
  type PollerMetricOptions,
  PollerMetrics,
  type ProgramsQueryOptions,
} from './poller-metrics.ts';
export type { PollerVpcEndpoints } from './poller-network.ts';
export type { BankingEventsPollerProps, GapRepairOptions, PollerProgram } from './poller-props.ts';
export type { PollerNetworkProps } from './poller-props-resolution.ts';
export { EventBusKind, EventGroupBy, FeedMode, StartPosition, StreamRecovery } from './prop-values.ts';
