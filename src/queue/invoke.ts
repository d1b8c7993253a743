// What the queue consumers need of the platform, as types only: one call of a function per message
// (the platform's adapter, platform/queue-invoker.ts, makes it through /fn's endpoints) and the
// triggers a platform runs. The queue layer stands below the platforms and imports none of them.
import type { QueueTriggerSpec } from '../manifest/types.ts';
import type { CallOutcome } from './delivery.ts';

export interface InvokeRequest {
  readonly namespace: string;
  readonly function: string;
  readonly body: Buffer;
  readonly headers: Record<string, string>;
}

export interface InvokeResult {
  readonly outcome: CallOutcome;
  readonly responseBytes: number;
}

export type Invoke = (req: InvokeRequest) => Promise<InvokeResult>;

/** A queue trigger a platform runs for one of its functions (function.yaml `queues:`). */
export interface QueueTriggerTarget {
  readonly namespace: string;
  readonly function: string;
  readonly spec: QueueTriggerSpec;
}
