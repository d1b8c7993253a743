// How many zip uploads may be unpacked at the same time, per process and per namespace. An upload
// holds up to its inflated size on disk and a share of memory while it is read, so a burst of them
// (or one tenant hammering the endpoint) must wait its turn: past a cap the upload is refused at
// once with 429 and a Retry-After, before its body is read. Pure bookkeeping, no timers.

export interface UploadCaps {
  /** Uploads being unpacked at once in this process. */
  readonly perProcess: number;
  /** Of those, at most this many for one namespace. */
  readonly perNamespace: number;
  /** What Retry-After says when a cap is reached, in seconds. */
  readonly retryAfterSec: number;
}

export const DEFAULT_UPLOAD_CAPS: UploadCaps = { perProcess: 2, perNamespace: 1, retryAfterSec: 5 };

export type UploadSlot = { readonly ok: true; release(): void } | { readonly ok: false; readonly reason: string; readonly retryAfterSec: number };

/** How refusals name what is capped (the same gate bounds /v1 .../logs?follow=1: "log follow(s)", "open"). */
export interface GateWords {
  readonly things: string;
  readonly state: string;
}

export class UploadGate {
  readonly #caps: UploadCaps;
  readonly #words: GateWords;
  #running = 0;
  readonly #byNamespace = new Map<string, number>();

  constructor(caps: UploadCaps = DEFAULT_UPLOAD_CAPS, words: GateWords = { things: 'upload(s)', state: 'being unpacked' }) {
    this.#caps = caps;
    this.#words = words;
  }

  /** Takes a slot for `namespace`, or says which cap is reached. Release the slot exactly once. */
  acquire(namespace: string): UploadSlot {
    const mine = this.#byNamespace.get(namespace) ?? 0;
    if (mine >= this.#caps.perNamespace) {
      return { ok: false, reason: `namespace ${namespace} already has ${mine} ${this.#words.things} ${this.#words.state} (at most ${this.#caps.perNamespace} at a time)`, retryAfterSec: this.#caps.retryAfterSec };
    }
    if (this.#running >= this.#caps.perProcess) {
      return { ok: false, reason: `this server has ${this.#running} ${this.#words.things} ${this.#words.state} already (at most ${this.#caps.perProcess} at a time)`, retryAfterSec: this.#caps.retryAfterSec };
    }
    this.#running++;
    this.#byNamespace.set(namespace, mine + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.#running--;
        const left = (this.#byNamespace.get(namespace) ?? 1) - 1;
        if (left <= 0) this.#byNamespace.delete(namespace);
        else this.#byNamespace.set(namespace, left);
      },
    };
  }

  /** Uploads being unpacked now (for tests and metrics). */
  get running(): number {
    return this.#running;
  }
}
