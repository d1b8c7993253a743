import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inRotation, onAddress, onProbeResult, onRefused, type PodState, type ProbePolicy } from './pod-state.ts';
import type { PodAddress } from './slice-addresses.ts';

const POLICY: ProbePolicy = { intervalMs: 50, timeoutMs: 500, windowMs: 1_000 };
const at = (ready: boolean, terminating = false): PodAddress => ({ hostPort: '10.0.0.2:8080', ready, terminating });

describe('a pod in /fn\'s rotation (probe state machine, fake clock)', () => {
  it('a new pod the kubelet has not called ready is probed from first sight, and serves from its first answer', () => {
    let s = onAddress(undefined, at(false), 0);
    assert.deepEqual(s.probe, { kind: 'probing', since: 0 });
    assert.equal(inRotation(at(false), s), false);
    s = onProbeResult(s, false, 50, POLICY);
    assert.equal(inRotation(at(false), s), false, 'not answering yet');
    s = onProbeResult(s, true, 100, POLICY);
    assert.deepEqual(s.probe, { kind: 'answered', at: 100 });
    assert.equal(inRotation(at(false), s), true, 'in rotation before the kubelet says ready');
  });

  it('a ready pod is in rotation without probes; terminating leaves at once, whatever ready says', () => {
    let s = onAddress(undefined, at(true), 0);
    assert.deepEqual(s, { wasReady: true, probe: { kind: 'none' } });
    assert.equal(inRotation(at(true), s), true);
    s = onAddress(s, at(true, true), 10);
    assert.equal(inRotation(at(true, true), s), false);
    const probed = onProbeResult(onAddress(undefined, at(false), 0), true, 10, POLICY);
    assert.equal(inRotation(at(false, true), onAddress(probed, at(false, true), 20)), false, 'a probed pod going away leaves too');
    assert.deepEqual(onAddress(probed, at(false, true), 20).probe, { kind: 'none' }, 'and is probed no more');
  });

  it('a pod that was ready and is no longer (its readiness probe fails) leaves rotation and is not probed back in', () => {
    let s = onAddress(undefined, at(true), 0);
    s = onAddress(s, at(false), 10);
    assert.deepEqual(s, { wasReady: true, probe: { kind: 'none' } });
    assert.equal(inRotation(at(false), s), false);
  });

  it('probing stops after the window: then the kubelet decides', () => {
    let s: PodState = onAddress(undefined, at(false), 0);
    s = onProbeResult(s, false, 999, POLICY);
    assert.equal(s.probe.kind, 'probing');
    s = onProbeResult(s, false, 1_000, POLICY);
    assert.deepEqual(s.probe, { kind: 'gave-up' });
    assert.equal(onProbeResult(s, true, 1_100, POLICY), s, 'a late answer changes nothing');
    assert.equal(inRotation(at(true), onAddress(s, at(true), 2_000)), true, 'ready later: in rotation');
  });

  it('a probed-only pod that refuses a call is probed again; a kubelet-ready one stays (its retry is the proxy\'s)', () => {
    const probed = onProbeResult(onAddress(undefined, at(false), 0), true, 10, POLICY);
    const refused = onRefused(probed, 500);
    assert.deepEqual(refused.probe, { kind: 'probing', since: 500 });
    assert.equal(inRotation(at(false), refused), false);
    const ready = onAddress(undefined, at(true), 0);
    assert.equal(onRefused(ready, 500), ready);
  });

  it('repeated identical slice events keep the state (no probe restarted)', () => {
    const s = onAddress(undefined, at(false), 0);
    assert.equal(onAddress(s, at(false), 30), s);
    const r = onAddress(undefined, at(true), 0);
    assert.equal(onAddress(r, at(true), 30), r);
  });
});
