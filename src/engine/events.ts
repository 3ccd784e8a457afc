import type {
  Address,
  Change,
  CheckResult,
  IntentOrigin,
  Plan,
  ResourceState,
  TendError,
} from '../core/index.js';

/**
 * What the engine reports while it works. The CLI renders these as progress lines (or JSON lines);
 * tests collect them. Events are plain data, tagged by `kind`.
 */
export type EngineEvent =
  | { readonly kind: 'pass-start'; readonly pass: number; readonly trigger: string }
  | {
      readonly kind: 'observed';
      readonly objects: number;
      readonly ms: number;
      /** A focused pass: only the objects the audit feed named (and what they reference) were read. */
      readonly focused?: boolean;
    }
  | {
      readonly kind: 'plan';
      readonly plan: Plan;
      /** The commit the plan was planned from (a git workspace). */
      readonly origin?: IntentOrigin;
    }
  | {
      readonly kind: 'recovered';
      readonly opId: string;
      readonly address: Address;
      readonly outcome: string;
    }
  | {
      readonly kind: 'op-start';
      readonly address: Address;
      readonly action: 'create' | 'update' | 'delete';
      readonly opId: string;
      readonly detail?: string;
    }
  | {
      readonly kind: 'op-done';
      readonly address: Address;
      readonly action: 'create' | 'update' | 'delete';
      readonly opId: string;
      readonly objectId: string;
      readonly ms: number;
    }
  | {
      readonly kind: 'op-failed';
      readonly address: Address;
      readonly action: string;
      readonly error: TendError;
    }
  | { readonly kind: 'blocked'; readonly address: Address; readonly reason: string }
  | { readonly kind: 'skipped'; readonly address: Address; readonly reason: string }
  | { readonly kind: 'verified'; readonly address: Address; readonly ms: number }
  | { readonly kind: 'check'; readonly address: Address; readonly result: CheckResult }
  | { readonly kind: 'change-observed'; readonly change: Change }
  | { readonly kind: 'drift'; readonly address: Address; readonly fields: readonly string[] }
  | {
      readonly kind: 'pass-done';
      readonly pass: number;
      readonly ms: number;
      readonly states: Readonly<Record<ResourceState, number>>;
      /** The commit the pass planned from (a git workspace). */
      readonly origin?: IntentOrigin;
    }
  | { readonly kind: 'warning'; readonly message: string }
  | { readonly kind: 'error'; readonly error: TendError };

/** Receives engine events. Must not throw. */
export type Reporter = (event: EngineEvent) => void;
