// Every replica's calls in flight reach the leader: exact averages from cumulative reports, summed over
// replicas; a replica that stops answering keeps counting for a grace period, then is dropped.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CountsGatherer, combine, contribution } from './counts-gatherer.ts';
import { ReplicaCounts, type CountsReport } from './replica-counts.ts';
import { peerUrls } from './peer-discovery.ts';

describe('ReplicaCounts (one replica)', () => {
  it('reports calls in flight, their integral over time and the last call', () => {
    let now = 1000;
    const c = new ReplicaCounts(() => now);
    const end1 = c.begin('ns', 'f');
    now += 500;
    const end2 = c.begin('ns', 'f');
    now += 500;
    end1();
    end1();
    assert.deepEqual(c.report().functions['ns/f'], { inFlight: 1, concurrencyMs: 500 + 2 * 500, lastRequestAt: 1500 });
    now += 1000;
    end2();
    assert.deepEqual(c.report().functions['ns/f'], { inFlight: 0, concurrencyMs: 2500, lastRequestAt: 1500 });
  });
});

describe('contribution and combine (pure)', () => {
  const report = (atMs: number, concurrencyMs: number, inFlight = 0, lastRequestAt = 1): CountsReport => ({ atMs, functions: { 'ns/f': { inFlight, concurrencyMs, lastRequestAt } } });
  it('averages over the interval between two reports, whatever its length', () => {
    assert.equal(contribution(report(0, 1000), report(2000, 7000)).get('ns/f')?.concurrency, 3);
    assert.equal(contribution(report(0, 1000), report(6000, 19000)).get('ns/f')?.concurrency, 3);
  });
  it('takes the count now at first sight and after a restart (the integral went back)', () => {
    assert.equal(contribution(undefined, report(2000, 7000, 4)).get('ns/f')?.concurrency, 4);
    assert.equal(contribution(report(0, 9000), report(2000, 100, 2)).get('ns/f')?.concurrency, 2);
  });
  it('sums replicas; the last call is the latest of them', () => {
    const a = contribution(report(0, 0), report(1000, 2000, 2, 50));
    const b = contribution(report(0, 0), report(1000, 1000, 1, 70));
    assert.deepEqual(combine([a, b]).get('ns/f'), { concurrency: 3, inFlight: 3, lastRequestAt: 70 });
  });
});

describe('CountsGatherer', () => {
  it('counts this replica and its peers; keeps a silent peer for the grace period, then drops it', async () => {
    let now = 0;
    const self = new ReplicaCounts(() => now);
    self.begin('ns', 'f');
    let peerArea = 0;
    let peerUp = true;
    const dropped: string[] = [];
    const g = new CountsGatherer({
      self: () => self.report(),
      peers: () => Promise.resolve(['http://peer']),
      fetchReport: () => (peerUp ? Promise.resolve({ atMs: now, functions: { 'ns/f': { inFlight: 2, concurrencyMs: peerArea, lastRequestAt: 5 } } }) : Promise.reject(new Error('ECONNREFUSED'))),
      now: () => now,
      graceMs: 5000,
      onPeerDropped: (url) => dropped.push(url),
    });
    await g.gather();
    now += 2000;
    peerArea += 4000;
    const both = await g.gather();
    assert.deepEqual(both.get('ns/f'), { concurrency: 1 + 2, inFlight: 3, lastRequestAt: 5 });
    peerUp = false;
    now += 2000;
    assert.equal((await g.gather()).get('ns/f')?.inFlight, 3, 'within the grace: the last numbers stand');
    now += 4000;
    assert.equal((await g.gather()).get('ns/f')?.inFlight, 1, 'past it: dropped');
    assert.deepEqual(dropped, ['http://peer']);
  });
});

describe('peerUrls (EndpointSlices of the metrics Service)', () => {
  it('lists the serving controller pods but this one, at their metrics port', () => {
    const urls = peerUrls(
      {
        items: [
          {
            addressType: 'IPv4',
            ports: [{ name: 'metrics', port: 9090 }],
            endpoints: [
              { addresses: ['10.0.0.1'], conditions: { ready: true, serving: true }, targetRef: { name: 'sless-controller-0' } },
              { addresses: ['10.0.0.2'], conditions: { ready: false, serving: true }, targetRef: { name: 'sless-controller-1' } },
              { addresses: ['10.0.0.3'], conditions: { ready: false, serving: false }, targetRef: { name: 'sless-controller-2' } },
            ],
          },
        ],
      },
      'sless-controller-0',
    );
    assert.deepEqual(urls, ['http://10.0.0.2:9090/scaling/in-flight']);
  });
});
