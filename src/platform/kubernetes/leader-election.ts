// One replica reconciles, every replica serves HTTP: leader election over a coordination.k8s.io/v1 Lease,
// the way client-go does it. A candidate takes the Lease when it is free (no holder) or when its holder
// has not renewed it for leaseDuration — measured on this replica's own clock from the moment it last
// saw the Lease change, so clock skew between nodes does not matter. Writes carry the resourceVersion
// read, so of two candidates only one wins. The leader renews every renewInterval; when it cannot renew
// for renewDeadline (< leaseDuration) it stops leading before anyone else may take over. stop() releases
// the Lease (empty holder), so another replica takes over at its next attempt instead of after
// leaseDuration; also when stop() came while the write that took the Lease was in flight. Leading ends
// with the writes too: `writeGate` (write-gate.ts, put in front of the reconcilers' API clients with
// gatedKubeConfig) admits writes only until renewDeadline after the last successful renewal, and never
// later than leaseDuration minus half the spare time (leaseDuration - renewDeadline) after it was sent;
// stepping down closes it and aborts the writes in flight. So the old leader has stopped writing before
// the new one may take the Lease (leaseDuration after it saw that renewal).
import { ApiException, CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { realTimers, type Timers } from './api-client/timers.ts';
import { WriteGate } from './write-gate.ts';

export interface LeaderElectionLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface LeaderElectionOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  /** Default `sless-controller`. */
  readonly name?: string;
  /** Unique per replica, e.g. the pod name. */
  readonly identity: string;
  /** Default 15 s. */
  readonly leaseDurationMs?: number;
  /** How often the leader renews and candidates retry. Default 2 s. */
  readonly renewIntervalMs?: number;
  /** How long a leader keeps leading without a successful renewal. Default 10 s. */
  readonly renewDeadlineMs?: number;
  /** Called when this replica becomes the leader; stopping waits for it to finish first. */
  readonly onStartedLeading: () => Promise<void> | void;
  /** Called when this replica stops leading (lost the Lease, or stop()). */
  readonly onStoppedLeading: () => Promise<void> | void;
  readonly logger?: LeaderElectionLogger;
  readonly timers?: Timers;
}

export const DEFAULT_LEASE_NAME = 'sless-controller';

/** A leader's next round after a failed one (client-go waits its retry period, 2 s). */
const RETRY_AFTER_FAILED_RENEWAL_MS = 500;

export type LeaseDecision = 'create' | 'renew' | 'take' | 'wait';

/**
 * What a candidate should do with the Lease it just read (pure). `observedAt` is when this replica first
 * saw the Lease's current resourceVersion; a holder counts as gone once that is leaseDuration ago.
 */
export function decideLease(lease: V1Lease | undefined, identity: string, now: number, observedAt: number, defaultDurationMs: number): LeaseDecision {
  if (!lease) return 'create';
  const holder = lease.spec?.holderIdentity ?? '';
  if (holder === identity) return 'renew';
  if (holder === '') return 'take';
  const durationMs = lease.spec?.leaseDurationSeconds ? lease.spec.leaseDurationSeconds * 1000 : defaultDurationMs;
  return now - observedAt >= durationMs ? 'take' : 'wait';
}

export class LeaderElector {
  /** What the reconcilers' writes must pass (gatedKubeConfig): open only while this replica surely leads. */
  readonly writeGate: WriteGate;
  private readonly api: CoordinationV1Api;
  private readonly name: string;
  private readonly leaseDurationMs: number;
  private readonly renewIntervalMs: number;
  private readonly renewDeadlineMs: number;
  /** How long one round of a leader may take (half the renew deadline, at least one renew interval). */
  private readonly attemptTimeoutMs: number;
  private failedRound = false;
  /** The Lease as this replica last wrote it: a leader renews it with one PUT, no GET before. */
  private held: V1Lease | undefined;
  private readonly timers: Timers;
  private observed: { resourceVersion: string; at: number } | undefined;
  private leading = false;
  /** The Lease may name this replica: a write of it was sent and not refused (its answer may never have
   * come, or come after stop()); false once it surely names someone else. stop() releases it then. */
  private mayHold = false;
  private lastRenewAt = 0;
  private running = false;
  private cancelTimer: (() => void) | undefined;
  private cancelWatchdog: (() => void) | undefined;
  private tick: Promise<void> = Promise.resolve();
  /** Leading callbacks run one after another, so a stop never overtakes the start it follows. */
  private transitions: Promise<void> = Promise.resolve();

  constructor(private readonly opts: LeaderElectionOptions) {
    this.api = opts.kubeConfig.makeApiClient(CoordinationV1Api);
    this.name = opts.name ?? DEFAULT_LEASE_NAME;
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewIntervalMs = opts.renewIntervalMs ?? 2_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? Math.min(10_000, Math.floor(this.leaseDurationMs * 2 / 3));
    this.attemptTimeoutMs = Math.min(this.renewDeadlineMs, Math.max(this.renewIntervalMs, Math.floor(this.renewDeadlineMs / 2)));
    if (this.renewDeadlineMs >= this.leaseDurationMs) {
      throw new Error(`leader election: renewDeadline (${this.renewDeadlineMs} ms) must be shorter than leaseDuration (${this.leaseDurationMs} ms)`);
    }
    this.timers = opts.timers ?? realTimers;
    this.writeGate = new WriteGate(this.timers);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  get lease(): string {
    return `${this.opts.namespace}/${this.name}`;
  }

  /** Starts competing; returns at once. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stops competing; when leading, stops leading (waits for onStoppedLeading); releases the Lease when
   * it may name this replica, also when the answer to the write that took it has not come yet. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.cancelTimer?.();
    this.cancelWatchdog?.();
    await this.tick;
    if (this.leading) this.stepDown('shutting down');
    await this.transitions;
    if (this.mayHold) {
      await this.withTimeout(this.release(), this.renewDeadlineMs).catch((err: unknown) =>
        this.opts.logger?.warn(`LeaderReleaseFailed: Lease ${this.lease}: ${err instanceof Error ? err.message : String(err)}`, { reason: 'LeaderReleaseFailed' }),
      );
    }
  }

  private schedule(ms: number): void {
    this.cancelTimer = this.timers.after(ms, () => {
      this.tick = this.attempt().finally(() => {
        // A leader whose round failed tries again soon, within its renew deadline.
        if (this.running) this.schedule(this.leading && this.failedRound ? Math.min(this.renewIntervalMs, RETRY_AFTER_FAILED_RENEWAL_MS) : this.renewIntervalMs);
      });
    });
  }

  private async attempt(): Promise<void> {
    const sentAt = this.timers.now();
    this.failedRound = false;
    try {
      // A leader's round gets half its renew deadline: one lost or starved request then leaves time for
      // another round before the deadline (under a CPU-starved API server one hung renewal used to end
      // leading). Candidates wait the whole deadline: nothing is at stake for them.
      const won = await this.withTimeout(this.tryAcquireOrRenew(), this.leading ? this.attemptTimeoutMs : this.renewDeadlineMs);
      if (won) {
        this.lastRenewAt = this.timers.now();
        // Others may take the Lease leaseDuration after they saw this renewal, at the earliest after it was
        // sent: writes stop renewDeadline after it succeeded, and in any case half the spare time before that.
        const spare = (this.leaseDurationMs - this.renewDeadlineMs) / 2;
        if (!this.running) return; // stop() releases it
        this.writeGate.openUntil(Math.min(this.lastRenewAt + this.renewDeadlineMs, sentAt + this.leaseDurationMs - spare));
        this.armWatchdog();
        if (!this.leading) this.stepUp();
      } else if (this.leading) {
        this.stepDown('another replica holds the Lease');
      }
    } catch (err) {
      this.failedRound = true;
      const message = err instanceof Error ? err.message : String(err);
      if (this.leading && this.timers.now() - this.lastRenewAt >= this.renewDeadlineMs) {
        this.stepDown(`could not renew the Lease for ${this.renewDeadlineMs} ms (${message})`);
      } else {
        const retryMs = this.leading ? Math.min(this.renewIntervalMs, RETRY_AFTER_FAILED_RENEWAL_MS) : this.renewIntervalMs;
        this.opts.logger?.warn(`LeaderElectionError: Lease ${this.lease}: ${message}; retrying in ${retryMs} ms`, { reason: 'LeaderElectionError' });
      }
    }
  }

  /** A request that hangs must not keep a leader leading: it gets the renew deadline, no more. */
  private withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
    let cancel: (() => void) | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      cancel = this.timers.after(ms, () => reject(new Error(`the API server did not answer within ${ms} ms`)));
    });
    return Promise.race([work, timeout]).finally(() => cancel?.());
  }

  /** Steps down renewDeadline after the last successful renewal, whatever the renew loop is doing. */
  private armWatchdog(): void {
    this.cancelWatchdog?.();
    this.cancelWatchdog = this.timers.after(Math.max(0, this.lastRenewAt + this.renewDeadlineMs - this.timers.now()), () => {
      if (this.leading && this.timers.now() - this.lastRenewAt >= this.renewDeadlineMs) {
        this.stepDown(`no successful renewal of the Lease for ${this.renewDeadlineMs} ms`);
      }
    });
  }

  private stepUp(): void {
    this.leading = true;
    this.opts.logger?.info(`LeaderElected: ${this.opts.identity} leads (Lease ${this.lease})`, { reason: 'LeaderElected' });
    this.transitions = this.transitions.then(async () => {
      try {
        await this.opts.onStartedLeading();
      } catch (err) {
        this.opts.logger?.warn(`LeaderStartFailed: ${err instanceof Error ? err.message : String(err)}`, { reason: 'LeaderStartFailed' });
      }
    });
  }

  private stepDown(why: string): void {
    this.leading = false;
    // First of all: no write from here on, and none still in flight.
    this.writeGate.close(`${this.opts.identity} stopped leading: ${why}`);
    this.opts.logger?.info(`LeaderLost: ${this.opts.identity} stops leading: ${why}`, { reason: 'LeaderLost' });
    this.transitions = this.transitions.then(async () => {
      try {
        await this.opts.onStoppedLeading();
      } catch (err) {
        this.opts.logger?.warn(`LeaderStopFailed: ${err instanceof Error ? err.message : String(err)}`, { reason: 'LeaderStopFailed' });
      }
    });
  }

  private async read(): Promise<V1Lease | undefined> {
    try {
      return await this.api.readNamespacedLease({ name: this.name, namespace: this.opts.namespace });
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw err;
    }
  }

  private observe(lease: V1Lease | undefined, now: number): number {
    const rv = lease?.metadata?.resourceVersion ?? '';
    if (this.observed?.resourceVersion !== rv) this.observed = { resourceVersion: rv, at: now };
    return this.observed.at;
  }

  /** One round: true when this replica holds the Lease afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.timers.now();
    if (this.leading && this.held) {
      // Renewal in one request: the PUT carries the resourceVersion of our own last write, so it fails
      // (409) if anyone wrote the Lease since; then read it and decide as any candidate does.
      try {
        const spec = this.held.spec ?? {};
        this.held = await this.api.replaceNamespacedLease({
          name: this.name,
          namespace: this.opts.namespace,
          body: { ...this.held, spec: { ...spec, renewTime: new V1MicroTime(now), acquireTime: spec.acquireTime ? new V1MicroTime(new Date(spec.acquireTime).getTime()) : undefined } },
        });
        this.observe(this.held, now);
        return true;
      } catch (err) {
        this.held = undefined;
        if (!(err instanceof ApiException && err.code === 409)) throw err;
      }
    }
    const lease = await this.read();
    const observedAt = this.observe(lease, now);
    const decision = decideLease(lease, this.opts.identity, now, observedAt, this.leaseDurationMs);
    if (decision === 'wait') {
      this.held = undefined;
      this.mayHold = false;
      return false;
    }
    this.mayHold = true;
    const at = new V1MicroTime(now);
    const durationSeconds = Math.max(1, Math.ceil(this.leaseDurationMs / 1000));
    try {
      if (decision === 'create') {
        const created = await this.api.createNamespacedLease({
          namespace: this.opts.namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.name, namespace: this.opts.namespace },
            spec: { holderIdentity: this.opts.identity, leaseDurationSeconds: durationSeconds, acquireTime: at, renewTime: at, leaseTransitions: 0 },
          },
        });
        this.observe(created, now);
        this.held = created;
        return true;
      }
      const spec = lease?.spec ?? {};
      const taking = decision === 'take';
      const replaced = await this.api.replaceNamespacedLease({
        name: this.name,
        namespace: this.opts.namespace,
        body: {
          ...lease,
          spec: {
            ...spec,
            holderIdentity: this.opts.identity,
            leaseDurationSeconds: durationSeconds,
            renewTime: at,
            acquireTime: taking ? at : spec.acquireTime ? new V1MicroTime(new Date(spec.acquireTime).getTime()) : at,
            leaseTransitions: taking ? (spec.leaseTransitions ?? 0) + 1 : (spec.leaseTransitions ?? 0),
          },
        },
      });
      this.observe(replaced, now);
      this.held = replaced;
      return true;
    } catch (err) {
      // Someone else wrote first (create raced, or the resourceVersion moved on): not ours this round.
      if (err instanceof ApiException && err.code === 409) {
        this.mayHold = false;
        return false;
      }
      throw err;
    }
  }

  /** Gives the Lease up so the next candidate need not wait for it to expire. Best effort. */
  private async release(): Promise<void> {
    try {
      const lease = await this.read();
      if (!lease || lease.spec?.holderIdentity !== this.opts.identity) {
        this.mayHold = false;
        return;
      }
      await this.api.replaceNamespacedLease({
        name: this.name,
        namespace: this.opts.namespace,
        body: {
          ...lease,
          spec: {
            ...lease.spec,
            holderIdentity: '',
            leaseDurationSeconds: 1,
            renewTime: new V1MicroTime(this.timers.now()),
            acquireTime: lease.spec.acquireTime ? new V1MicroTime(new Date(lease.spec.acquireTime).getTime()) : undefined,
          },
        },
      });
      this.mayHold = false;
      this.opts.logger?.info(`LeaderReleased: ${this.opts.identity} released Lease ${this.lease}`, { reason: 'LeaderReleased' });
    } catch (err) {
      this.opts.logger?.warn(`LeaderReleaseFailed: Lease ${this.lease}: ${err instanceof Error ? err.message : String(err)}; the next leader waits for it to expire`, {
        reason: 'LeaderReleaseFailed',
      });
    }
  }
}
