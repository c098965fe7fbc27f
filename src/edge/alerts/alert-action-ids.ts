/** The action ids of an alert's buttons; "Plan fix" is also the button under a check's answer. */
export const ALERT_ACTIONS = { planFix: 'alert_plan_fix', recheck: 'alert_recheck', silence: 'alert_silence' } as const;
