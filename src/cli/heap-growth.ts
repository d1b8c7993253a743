// How far V8 lets the old generation grow past what survived the last full GC before it collects again.
// The controller's RSS follows that limit, not its live objects: at 1,000 functions ~72 MB are live
// (heap snapshot), yet the pod's --max-old-space-size=768 lets V8 grow the old generation up to 1.5x that
// (1.3x at 256 MB or less, 4x on a node of 4 GB or more) while syncs and reconciles churn through API
// objects, and what it commits stays resident. A fixed smaller factor keeps the heap near its live size
// at the price of more frequent full GCs, mostly marked concurrently. NODE_OPTIONS refuses this V8 flag,
// so the controller sets it itself, before its informers fill the heap (V8 reads it at every full GC).
import { setFlagsFromString } from 'node:v8';

/** The V8 flags for a growing factor of 1 + percent/100; none for 0 (V8 decides). */
export function heapGrowthFlags(percent: number): string[] {
  return percent > 0 ? [`--heap-growing-percent=${Math.round(percent)}`] : [];
}

export function applyHeapGrowth(percent: number, setFlags: (flags: string) => void = setFlagsFromString): void {
  for (const flag of heapGrowthFlags(percent)) setFlags(flag);
}
