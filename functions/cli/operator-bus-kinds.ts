/**
 * Each kind of bus and the operator commands' strategy for it (`operator-bus.ts`): a command asks
 * for the deployment's once and works through it. A kind added to the settings table fails to
 * compile here until it has a strategy.
 */
import { ClassicOperatorBus } from './classic-operator-bus.ts';
import { CustomOperatorBus } from './custom-operator-bus.ts';
import type { Deployment, EventBusKind } from './deployment.ts';
import type { OperatorBus } from './operator-bus.ts';

const OPERATOR_BUS_KINDS: Readonly<Record<EventBusKind, new (deployment: Deployment) => OperatorBus>> =
  Object.freeze({
    classic: ClassicOperatorBus,
    custom: CustomOperatorBus,
  });

/** The strategy for the deployment's bus, by its kind (`Deployment.busKind`). */
export function operatorBusOf(deployment: Deployment): OperatorBus {
  return new OPERATOR_BUS_KINDS[deployment.busKind](deployment);
}
