// A sync failure that only a user's change heals (a missing Secret, too many functions, an emptied source):
// the repository goes Stalled with `reason` and is tried again at its interval, not retried with backoff.
export class TerminalError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}
