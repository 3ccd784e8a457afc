import type { AppEvent } from '../app/index.js';

/** An application event as the stream sends it: numbered, timed. */
export interface HubEvent {
  readonly id: number;
  readonly time: string;
  readonly event: AppEvent;
}

/**
 * Fans the loop's and the API's application events out to every listener (SSE streams, metrics,
 * logs). Keeps the last few so a client reconnecting with `Last-Event-ID` misses nothing recent.
 */
export class EventHub {
  readonly #listeners = new Set<(e: HubEvent) => void>();
  readonly #recent: HubEvent[] = [];
  readonly #keep: number;
  readonly #now: () => Date;
  #next = 1;

  constructor(now: () => Date, keep = 256) {
    this.#now = now;
    this.#keep = keep;
  }

  /** Publishes one event to every listener (a listener that throws is dropped, not the event). */
  readonly publish = (event: AppEvent): void => {
    const e: HubEvent = { id: this.#next++, time: this.#now().toISOString(), event };
    this.#recent.push(e);
    if (this.#recent.length > this.#keep) this.#recent.shift();
    for (const l of this.#listeners) {
      try {
        l(e);
      } catch {
        this.#listeners.delete(l);
      }
    }
  };

  /** Listens from now on; returns how to stop. */
  subscribe(listener: (e: HubEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The kept events after `id`. */
  since(id: number): HubEvent[] {
    return this.#recent.filter((e) => e.id > id);
  }
}
