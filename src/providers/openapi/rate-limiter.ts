import type { Clock, Sleep } from './timing.js';

/**
 * Spaces requests at most `perSecond` apart on average (0 = no limit). Each caller reserves the next
 * free instant, so concurrent callers are spread out instead of bursting; the clock and sleep are
 * injected so tests skip forward instead of waiting.
 */
export class RateLimiter {
  private next = Number.NEGATIVE_INFINITY;

  constructor(
    readonly perSecond: number,
    private readonly clock: Clock,
    private readonly sleep: Sleep,
  ) {}

  /** Resolves when the caller may send. */
  async take(signal?: AbortSignal): Promise<void> {
    if (!(this.perSecond > 0)) return;
    const now = this.clock();
    const at = Math.max(now, this.next);
    this.next = at + 1000 / this.perSecond;
    if (at > now) await this.sleep(at - now, signal);
  }
}
