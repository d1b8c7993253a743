// The one error that stalls: a failure only someone's change heals (a refused namespace or Secret, a missing
// or unmarked git Secret, wrong git credentials, too many functions, an emptied source). The reconciler
// skeleton (reconcilers/reconcile-object.ts) turns it into Stalled=True with `reason` and no backoff retry:
// the repository's interval, a spec change or the event that heals it looks again. /v1 answers it with 400.
// Every other error is retried with backoff. Its reason is one of reasons.ts (a typo fails typecheck).
import type { SlessReason } from '../reasons.ts';

export class StalledError extends Error {
  constructor(
    readonly reason: SlessReason,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'StalledError';
  }
}
