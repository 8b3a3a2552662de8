import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';

/**
 * What an alarm does when it changes state: a strategy, so the construct never decides who gets
 * paged. Implement it to send alarms to an incident tool, a chat channel or an OpsItem.
 *
 * @example
 * new BankingEventsPoller(this, 'Poller', { alarmActions: AlarmActions.notifySns(pagerTopic) });
 */
export interface IAlarmActionStrategy {
  /** Adds this strategy's actions to one alarm. */
  addActions(alarm: cloudwatch.Alarm): void;
}

/** Ready-made strategies. */
export const AlarmActions = Object.freeze({
  /**
   * Publishes to an SNS topic on ALARM and, unless `onOk` is false, again on OK so the person on
   * call sees the recovery too.
   */
  notifySns(topic: sns.ITopic, options: { readonly onOk?: boolean } = {}): IAlarmActionStrategy {
    const action = new cloudwatchActions.SnsAction(topic);
    const onOk = options.onOk ?? true;
    return {
      addActions(alarm) {
        alarm.addAlarmAction(action);
        if (onOk) alarm.addOkAction(action);
      },
    };
  },

  /** Alarms only change state and show on the dashboard; nobody is notified. */
  none(): IAlarmActionStrategy {
    return { addActions() {} };
  },
});
