// Per function, its pods as /fn routes to them: fed by EndpointSlice events (endpoint-slice-informer.ts),
// it keeps each address's state (pod-state.ts), probes new pods itself until they answer, and hands
// /fn a picker per function (pick-pod.ts) that counts this replica's calls in flight per pod.
// No API request per call: everything here comes from the watch and from probes of the pods.
import type { V1EndpointSlice } from '@kubernetes/client-node';
import type { PickedReplica, ReplicaPicker } from '../../types.ts';
import type { Timers } from '../api-client/timers.ts';
import type { InformerEvent } from '../api-client/resilient-informer.ts';
import { pickLeastLoaded } from './pick-pod.ts';
import { inRotation, isProbing, onAddress, onProbeResult, onRefused, PROBE_POLICY, type PodState, type ProbePolicy } from './pod-state.ts';
import { addressesOfSlices, serviceOfSlice, type PodAddress } from './slice-addresses.ts';

/** GETs a pod's health path at `baseUrl`; true when it answered 2xx within `timeoutMs`. Never throws. */
export type Probe = (baseUrl: string, timeoutMs: number) => Promise<boolean>;

export interface PodTableOptions {
  readonly probe: Probe;
  readonly timers: Timers;
  readonly policy?: ProbePolicy;
  /** A pod entered or left a function's rotation (`key` = `namespace/name`): logs and waiters. */
  readonly onRotation?: (key: string, pod: string, entered: boolean) => void;
}

interface Pod {
  address: PodAddress;
  /** `http://ip:port`, made once (the address's hostPort never changes for a pod entry). */
  readonly baseUrl: string;
  state: PodState;
  inFlight: number;
  rotating: boolean;
  /** Cancels the pending probe timer; set while a probe is scheduled. */
  cancelProbe?: () => void;
  /** Bumped when the pod is forgotten, so a probe answering late changes nothing. */
  generation: number;
}

/** A function's picker: stable per function, reads the pods as they are at each call. */
export interface FunctionPods extends ReplicaPicker {
  /** At least one pod is in rotation. */
  readonly serving: boolean;
  /** The `ip:port` of the pods in rotation (tests, logs). */
  rotation(): string[];
}

class FunctionEntry implements FunctionPods {
  readonly slices = new Map<string, V1EndpointSlice>();
  readonly pods = new Map<string, Pod>();
  /** The pods in rotation, rebuilt when one enters or leaves. */
  inRotation: Pod[] = [];
  private cursor = 0;

  constructor(
    readonly key: string,
    private readonly table: PodTable,
  ) {}

  get serving(): boolean {
    return this.inRotation.length > 0;
  }

  rotation(): string[] {
    return this.inRotation.map((p) => p.address.hostPort);
  }

  pick(): PickedReplica | undefined {
    const index = pickLeastLoaded(this.inRotation, this.cursor);
    if (index < 0) return undefined;
    this.cursor = (index + 1) % this.inRotation.length;
    const pod = this.inRotation[index] as Pod;
    pod.inFlight++;
    let released = false;
    return {
      baseUrl: pod.baseUrl,
      release: (outcome) => {
        if (released) return;
        released = true;
        pod.inFlight--;
        if (outcome === 'refused') this.table.refused(this, pod);
      },
    };
  }
}

export class PodTable {
  private readonly functions = new Map<string, FunctionEntry>();
  /** Slice `namespace/name` → the function key it was filed under (a delete event may lack labels). */
  private readonly sliceOwners = new Map<string, string>();
  private readonly policy: ProbePolicy;
  private closed = false;

  constructor(private readonly opts: PodTableOptions) {
    this.policy = opts.policy ?? PROBE_POLICY;
  }

  /** The function's pods, or undefined when no slice of its Service is known (then /fn uses the Service). */
  pods(namespace: string, name: string): FunctionPods | undefined {
    const entry = this.functions.get(`${namespace}/${name}`);
    return entry && entry.pods.size > 0 ? entry : undefined;
  }

  /** One informer event. */
  apply(event: InformerEvent, slice: V1EndpointSlice): void {
    if (this.closed) return;
    const sliceKey = `${slice.metadata?.namespace ?? ''}/${slice.metadata?.name ?? ''}`;
    const key = this.sliceOwners.get(sliceKey) ?? serviceOfSlice(slice);
    if (!key) return;
    let entry = this.functions.get(key);
    if (event === 'delete') {
      this.sliceOwners.delete(sliceKey);
      if (!entry) return;
      entry.slices.delete(sliceKey);
    } else {
      this.sliceOwners.set(sliceKey, key);
      if (!entry) {
        entry = new FunctionEntry(key, this);
        this.functions.set(key, entry);
      }
      entry.slices.set(sliceKey, slice);
    }
    this.update(key, entry);
    if (entry.slices.size === 0) this.functions.delete(key);
  }

  /** Stops every probe; later events are ignored. */
  close(): void {
    this.closed = true;
    for (const entry of this.functions.values()) for (const pod of entry.pods.values()) this.forget(pod);
    this.functions.clear();
  }

  /** A call found nothing listening at `pod`. */
  refused(entry: FunctionEntry, pod: Pod): void {
    if (pod.generation < 0) return;
    this.setState(entry.key, entry, pod, onRefused(pod.state, this.opts.timers.now()));
  }

  private update(key: string, entry: FunctionEntry): void {
    const now = this.opts.timers.now();
    const seen = new Set<string>();
    for (const address of addressesOfSlices(entry.slices.values())) {
      seen.add(address.hostPort);
      const pod = entry.pods.get(address.hostPort);
      if (pod) {
        pod.address = address;
        this.setState(key, entry, pod, onAddress(pod.state, address, now));
      } else {
        const fresh: Pod = { address, baseUrl: `http://${address.hostPort}`, state: onAddress(undefined, address, now), inFlight: 0, rotating: false, generation: 0 };
        entry.pods.set(address.hostPort, fresh);
        this.setState(key, entry, fresh, fresh.state, true);
      }
    }
    for (const [hostPort, pod] of entry.pods) {
      if (seen.has(hostPort)) continue;
      entry.pods.delete(hostPort);
      this.forget(pod);
      if (pod.rotating) this.changed(key, entry, pod, false);
    }
  }

  /** Records the pod's new state (the address may have changed too): rotation, and probes started or stopped. */
  private setState(key: string, entry: FunctionEntry, pod: Pod, state: PodState, fresh = false): void {
    const wasProbing = !fresh && isProbing(pod.state);
    pod.state = state;
    this.recheck(key, entry, pod);
    // The probe loop (scheduleProbe) goes on by itself while the pod stays probing.
    if (isProbing(state) && !wasProbing) this.scheduleProbe(key, entry, pod, 0);
    else if (!isProbing(state) && pod.cancelProbe) {
      pod.cancelProbe();
      delete pod.cancelProbe;
    }
  }

  private recheck(key: string, entry: FunctionEntry, pod: Pod): void {
    const rotating = inRotation(pod.address, pod.state);
    if (rotating !== pod.rotating) this.changed(key, entry, pod, rotating);
  }

  private changed(key: string, entry: FunctionEntry, pod: Pod, rotating: boolean): void {
    pod.rotating = rotating;
    entry.inRotation = [...entry.pods.values()].filter((p) => p.rotating);
    this.opts.onRotation?.(key, pod.address.pod ?? pod.address.hostPort, rotating);
  }

  private scheduleProbe(key: string, entry: FunctionEntry, pod: Pod, delayMs: number): void {
    const generation = pod.generation;
    let cancelled = false;
    const cancelTimer = this.opts.timers.after(delayMs, () => {
      void this.opts.probe(pod.baseUrl, this.policy.timeoutMs).then((ok) => {
        if (cancelled || pod.generation !== generation) return;
        delete pod.cancelProbe;
        this.setState(key, entry, pod, onProbeResult(pod.state, ok, this.opts.timers.now(), this.policy));
        if (isProbing(pod.state)) this.scheduleProbe(key, entry, pod, this.policy.intervalMs);
      });
    });
    pod.cancelProbe = () => {
      cancelled = true;
      cancelTimer();
    };
  }

  private forget(pod: Pod): void {
    pod.cancelProbe?.();
    delete pod.cancelProbe;
    pod.generation = -1;
  }
}
