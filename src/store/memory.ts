import type {
  ActionRun,
  Announcement,
  FieldClaim,
  Operation,
  ResourceStatus,
} from '../core/index.js';
import { TendError } from '../core/index.js';
import type { LedgerHead } from './ledger-chain.js';
import type { ChangeRow } from './rows.js';
import type { Lease, Store, TwinEntry } from './store.js';

// One workspace's whole memory, as `tend store copy` moves it from one store to another
// (docs/store.md, docs/decisions/0038-store-copy.md). Not part of the hot `Store` interface: each
// store implements `MemoryTransfer` beside it.

/**
 * A ledger entry exactly as stored: its columns as text (the hashed members as written), its format,
 * key id and hashes. Copied as it is — never re-signed, never re-appended — so the chain verifies on
 * the copy with the key that wrote it.
 */
export interface LedgerRow extends ChangeRow {
  /** When the store it comes from appended it (ISO time); not part of the entry, not hashed. */
  readonly recorded_at: string;
}

/**
 * A stored ledger row as it is, with its columns only (a table's others, e.g. PostgreSQL's
 * `workspace`, left out); `recorded_at` as ISO text whichever way the driver read it.
 */
export function ledgerRowOf(r: ChangeRow & { readonly recorded_at: string | Date }): LedgerRow {
  return {
    seq: r.seq,
    time: r.time,
    actor: r.actor,
    actor_kind: r.actor_kind ?? null,
    intent: r.intent,
    motivation: r.motivation,
    source: r.source,
    address: r.address,
    type: r.type,
    object_id: r.object_id,
    action: r.action,
    fields: r.fields,
    before: r.before,
    after: r.after,
    decision: r.decision ?? null,
    origin: r.origin ?? null,
    compliance: r.compliance ?? null,
    key_id: r.key_id ?? null,
    format: r.format ?? 1,
    prev_hash: r.prev_hash,
    hash: r.hash,
    recorded_at: typeof r.recorded_at === 'string' ? r.recorded_at : r.recorded_at.toISOString(),
  };
}

/** An action run with the lease epoch it was last written under. */
export interface StoredActionRun {
  readonly run: ActionRun;
  readonly epoch?: number;
}

/**
 * Everything a store remembers of one workspace except its lease: the twin, the journal (operations
 * with their settlements), the ledger with its head, feed cursors, statuses, announcements, field
 * claims, settings (e.g. the remembered workspace name) and action runs with their steps. Each list is
 * in the order the store reads it back; values are as stored (already redacted).
 */
export interface WorkspaceMemory {
  readonly twin: readonly TwinEntry[];
  /** Oldest first (created, then journaled). */
  readonly operations: readonly Operation[];
  readonly ledger: {
    /** By seq. */
    readonly entries: readonly LedgerRow[];
    /** The recorded head (seq 0 and the genesis hash when the ledger is empty). */
    readonly head: LedgerHead;
  };
  readonly cursors: readonly { readonly provider: string; readonly cursor: string }[];
  readonly statuses: readonly ResourceStatus[];
  /** Oldest first (by time made, then storing order). */
  readonly announcements: readonly Announcement[];
  readonly claims: readonly FieldClaim[];
  readonly meta: readonly { readonly key: string; readonly value: string }[];
  /** Oldest first. */
  readonly actionRuns: readonly StoredActionRun[];
}

/** How many records of each kind a workspace's memory holds. */
export interface MemoryCounts {
  readonly twin: number;
  readonly operations: number;
  readonly ledger: number;
  readonly cursors: number;
  readonly statuses: number;
  readonly announcements: number;
  readonly claims: number;
  readonly meta: number;
  readonly actionRuns: number;
}

/** What an import is told of its target, read in the import's own transaction. */
export interface ImportTarget {
  readonly counts: MemoryCounts;
  /** The target workspace's lease (a SQLite file: every lease in it), expired or not. */
  readonly leases: readonly Lease[];
}

/** How `importMemory` treats a target that already holds memory. */
export interface ImportOptions {
  /** Replace the workspace's memory in the target; without it a non-empty target is refused. */
  readonly replace: boolean;
  /**
   * Called in the import's transaction, under the locks that keep writers and lease takers out,
   * before anything is written: throwing refuses the import (e.g. a live lease on the target).
   */
  readonly check?: (target: ImportTarget) => void;
}

/** How `exportMemory` reads. */
export interface ExportOptions {
  /**
   * Called in the export's snapshot with the workspace's lease (SQLite: every lease in the file),
   * before anything else is read: throwing refuses the export (e.g. a live writer).
   */
  readonly check?: (leases: readonly Lease[]) => void;
}

/**
 * Moving one workspace's whole memory between stores (`tend store copy`), leases excluded. Both
 * stores implement it; a store of another kind may not.
 */
export interface MemoryTransfer {
  /** The workspace's memory, read in one snapshot (writers committing meanwhile are not half-seen). */
  exportMemory(options?: ExportOptions): Promise<WorkspaceMemory>;
  /**
   * Writes `memory` as the workspace's whole memory in one transaction: refused
   * (`store.copy-target-not-empty`) when the workspace already holds memory unless `replace`, which
   * deletes it first (ledger included). Ledger entries and the head are written as they are; every
   * other value passes through the store's redactor. Resolves with the counts now stored.
   */
  importMemory(memory: WorkspaceMemory, options: ImportOptions): Promise<MemoryCounts>;
}

/** Whether a store can export and import a workspace's memory. */
export function isMemoryTransfer(store: Store): store is Store & MemoryTransfer {
  const s = store as Partial<MemoryTransfer>;
  return typeof s.exportMemory === 'function' && typeof s.importMemory === 'function';
}

/** The counts of a memory. */
export function countMemory(memory: WorkspaceMemory): MemoryCounts {
  return {
    twin: memory.twin.length,
    operations: memory.operations.length,
    ledger: memory.ledger.entries.length,
    cursors: memory.cursors.length,
    statuses: memory.statuses.length,
    announcements: memory.announcements.length,
    claims: memory.claims.length,
    meta: memory.meta.length,
    actionRuns: memory.actionRuns.length,
  };
}

/** The kinds of records, in the order they are told, with their names (one, many). */
export const MEMORY_KINDS: readonly (readonly [keyof MemoryCounts, string, string])[] = [
  ['ledger', 'ledger entry', 'ledger entries'],
  ['twin', 'twin entry', 'twin entries'],
  ['operations', 'operation', 'operations'],
  ['statuses', 'status', 'statuses'],
  ['cursors', 'feed cursor', 'feed cursors'],
  ['announcements', 'announcement', 'announcements'],
  ['claims', 'field claim', 'field claims'],
  ['actionRuns', 'action run', 'action runs'],
  ['meta', 'setting', 'settings'],
];

/**
 * The table of each kind of record, named alike on both stores (PostgreSQL's in the schema `tend`):
 * what is counted.
 */
export const MEMORY_TABLES: readonly (readonly [keyof MemoryCounts, string])[] = [
  ['twin', 'twin'],
  ['operations', 'operations'],
  ['ledger', 'changes'],
  ['cursors', 'cursors'],
  ['statuses', 'statuses'],
  ['announcements', 'announcements'],
  ['claims', 'field_claims'],
  ['meta', 'meta'],
  ['actionRuns', 'action_runs'],
];

/**
 * The tables a replacing import empties before the ledger (whose append-only guard needs lifting):
 * every table of the memory but the ledger's, steps before their runs.
 */
export const CLEARED_TABLES: readonly string[] = [
  'twin',
  'operations',
  'cursors',
  'statuses',
  'announcements',
  'field_claims',
  'meta',
  'action_steps',
  'action_runs',
];

/** Whether nothing is remembered. */
export function isEmptyMemory(counts: MemoryCounts): boolean {
  return MEMORY_KINDS.every(([kind]) => counts[kind] === 0);
}

/** "12 ledger entries, 5 twin entries, 1 setting": the kinds that are there (all when `all`). */
export function describeCounts(counts: MemoryCounts, all = false): string {
  const parts = MEMORY_KINDS.filter(([kind]) => all || counts[kind] !== 0).map(
    ([kind, one, many]) => `${counts[kind]} ${counts[kind] === 1 ? one : many}`,
  );
  return parts.length === 0 ? 'nothing' : parts.join(', ');
}

/**
 * The refusal of a copy onto a workspace that already holds memory: what is there, and what to do.
 * `workspace` names it (undefined: a SQLite file that remembers no name).
 */
export function targetNotEmptyError(
  workspace: string | undefined,
  counts: MemoryCounts,
): TendError {
  const which = workspace === undefined ? 'a workspace' : `workspace ${workspace}`;
  return new TendError(
    'store.copy-target-not-empty',
    `the target already holds ${which}: ${describeCounts(counts)}; pass --force to replace it`,
    {
      phase: 'store',
      hint: '--force deletes that memory (its ledger included) and writes the copy in its place',
    },
  );
}
