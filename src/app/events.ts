import type { Diagnostic } from '../core/index.js';
import type { EngineEvent } from '../engine/index.js';

/**
 * What the application layer reports while it works: the engine's events plus the layer's own
 * (leases, intent reloads). Plain data tagged by `kind`, so the CLI renders them, the HTTP API streams
 * them and tests collect them.
 */
export type AppEvent =
  | EngineEvent
  | {
      readonly kind: 'lease';
      readonly workspace: string;
      readonly epoch: number;
      /** The expired or dead holder's lease this one took over. */
      readonly tookOver?: { readonly command: string; readonly pid: number; readonly host: string };
    }
  | {
      readonly kind: 'intent-reloaded';
      readonly resources: number;
      readonly contentHash: string;
    }
  | {
      /** The intent on disk does not load: the last valid one stays in force (and nothing is pruned). */
      readonly kind: 'intent-invalid';
      readonly diagnostics: readonly Diagnostic[];
      readonly contentHash: string;
    };

/** Receives application events. Must not throw. */
export type AppReporter = (event: AppEvent) => void;
