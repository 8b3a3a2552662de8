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

/** Options of `AlarmActions.notifySns`. */
export interface NotifySnsOptions {
  /**
   * Also publish when the alarm returns to OK, so the person on call sees the recovery.
   *
   * @default true
   */
  readonly onOk?: boolean;
}

/** Ready-made strategies. */
export class AlarmActions {
  /**
   * Publishes to an SNS topic on ALARM and, unless `onOk` is false, again on OK so the person on
   * call sees the recovery too.
   */
  static notifySns(topic: sns.ITopic, options: NotifySnsOptions = {}): IAlarmActionStrategy {
    const action = new cloudwatchActions.SnsAction(topic);
    const onOk = options.onOk ?? true;
    return {
      addActions(alarm) {
        alarm.addAlarmAction(action);
        if (onOk) alarm.addOkAction(action);
      },
    };
  }

  /** Alarms only change state and show on the dashboard; nobody is notified. */
  static none(): IAlarmActionStrategy {
    return { addActions() {} };
  }

  private constructor() {}
}
