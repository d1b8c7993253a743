// Whether a controller replica leads (pure): the Lease has a holder that renewed it within its
// leaseDurationSeconds (leader-election.ts renews every few seconds while it leads).

export interface LeaseLike {
  readonly spec?: { readonly holderIdentity?: string | null; readonly renewTime?: string | Date | null; readonly leaseDurationSeconds?: number | null };
}

export function leaseVerdict(lease: LeaseLike | undefined, nowMs: number): { ok: true; holder: string; ageSec: number } | { ok: false; why: string } {
  if (!lease) return { ok: false, why: 'no Lease: no replica has ever led' };
  const holder = lease.spec?.holderIdentity ?? '';
  if (!holder) return { ok: false, why: 'the Lease has no holder: no replica leads' };
  const renewed = lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : Number.NaN;
  const ageSec = Math.round((nowMs - renewed) / 1000);
  const duration = lease.spec?.leaseDurationSeconds ?? 15;
  if (!Number.isFinite(renewed) || ageSec > duration) return { ok: false, why: `the holder ${holder} last renewed the Lease ${Number.isFinite(ageSec) ? `${ageSec} s ago` : 'never'} (lease duration ${duration} s): it stopped leading` };
  return { ok: true, holder, ageSec: Math.max(0, ageSec) };
}
