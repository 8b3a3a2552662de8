/** Public API of the reusable construct: `import { BankingEventsPoller } from './infra/constructs/index.ts'`. */
export { AlarmActions, type IAlarmActionStrategy } from './alarm-actions.ts';
export {
  BankingEventsPoller,
  type SubscriberGrant,
  type SubscriberGrantOptions,
} from './banking-events-poller.ts';
export {
  type EventRouteOptions,
  EventRouting,
  type EventRoutingProps,
  type Route,
  type RouteTargetOptions,
} from './event-routing.ts';
export { EventSchemas, type EventSchemasProps, eventJsonSchema, schemaName } from './event-schemas.ts';
export { PollerAlarms, type PollerAlarmsProps } from './poller-alarms.ts';
export { PollerDashboard, type PollerDashboardProps } from './poller-dashboard.ts';
export { POLLER_SERVICE_NAME, PollerMetrics } from './poller-metrics.ts';
export type { BankingEventsPollerProps, PollerProgram } from './poller-props.ts';
