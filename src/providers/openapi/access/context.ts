import type { ObservedObject, SecretRegistry, WriteContext } from '../../../core/index.js';
import { TendError } from '../../../core/index.js';
import type { DerivedType } from '../derive-types.js';
import type { HttpClient } from '../transport/http-client.js';
import type { EmbeddedState } from './embedded.js';

/**
 * What every access implementation shares, handed to each call explicitly: the provider's HTTP
 * client, the types (to reach parents), where warnings and secrets go, the clock, and the state of
 * embedded sub-collections (shared parent reads, batched changes). One per provider.
 */
export interface AccessContext {
  readonly http: HttpClient;
  /** The endpoint next-page links must stay below; without it such links are refused. */
  readonly baseUrl: string | undefined;
  readonly types: ReadonlyMap<string, DerivedType>;
  /** Records a disagreement between the platform and its document, once per distinct message. */
  readonly warn: (message: string) => void;
  /** Where the values of secret fields the platform returns are registered (the redactor). */
  readonly secrets: SecretRegistry | undefined;
  /** Unix milliseconds now, for `x-tend-normalize: past-is-now`. */
  readonly now: () => number;
  /**
   * Every object of a type, listed the way its shape lists them (object-access.ts chooses): what a
   * create whose answer names no object searches for it.
   */
  readonly list: (t: DerivedType, signal?: AbortSignal) => Promise<ObservedObject[]>;
  readonly embedded: EmbeddedState;
}

/**
 * The provider verbs for one shape of type (collection, singleton, embedded). Reads never mutate;
 * writes send what was declared in its canonical spelling.
 */
export interface ShapeAccess {
  list(ctx: AccessContext, t: DerivedType, signal?: AbortSignal): Promise<ObservedObject[]>;
  read(
    ctx: AccessContext,
    t: DerivedType,
    id: string,
    signal?: AbortSignal,
  ): Promise<ObservedObject | undefined>;
  create(
    ctx: AccessContext,
    t: DerivedType,
    desired: Record<string, unknown>,
    wctx: WriteContext,
  ): Promise<ObservedObject>;
  update(
    ctx: AccessContext,
    t: DerivedType,
    id: string,
    desired: Record<string, unknown>,
    current: ObservedObject,
    wctx: WriteContext,
  ): Promise<ObservedObject>;
  remove(ctx: AccessContext, t: DerivedType, id: string, wctx: WriteContext): Promise<void>;
}

/** The parent type of a nested or embedded type; a parent the types lack is an internal error. */
export function parentOf(ctx: AccessContext, t: DerivedType): DerivedType {
  const name = t.embedded?.parentType ?? t.info.parent?.type;
  const parent = name === undefined ? undefined : ctx.types.get(name);
  if (parent === undefined) {
    throw new TendError('provider.internal', `${t.info.name} has no parent type ${String(name)}`);
  }
  return parent;
}
