// Which pod of a function's rotation takes the next call: the one with the fewest calls in flight from
// this /fn replica, ties taken in turn (round-robin from `cursor`), so one slow pod does not collect a
// queue while another idles, and equal pods share evenly. Pure.

export interface Candidate {
  readonly inFlight: number;
}

/** The index in `candidates` to use, or -1 when there is none. */
export function pickLeastLoaded(candidates: readonly Candidate[], cursor: number): number {
  const n = candidates.length;
  if (n === 0) return -1;
  let best = -1;
  let bestLoad = Infinity;
  for (let i = 0; i < n; i++) {
    const index = (cursor + i) % n;
    const load = (candidates[index] as Candidate).inFlight;
    if (load < bestLoad) {
      best = index;
      bestLoad = load;
      if (load === 0) break;
    }
  }
  return best;
}
