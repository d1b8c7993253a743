// What one reconcile of a Function decided: the outcome and status to write, when to look again, and
// whether to hold the write (a finished build whose rollout is moments away: function-reconciler.ts).
import type { FunctionReason } from '../../reasons.ts';
import type { FunctionStatus } from '../objects/resources.ts';
import type { Reconciled } from './reconcile-object.ts';

export type StepResult = Reconciled<FunctionStatus, FunctionReason>;
