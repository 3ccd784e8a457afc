// The pure core: model, addresses, references, graph, diff and plan. No I/O, no clock, no randomness.
export * from './address.js';
export * from './change.js';
export * from './diagnostic.js';
export * from './errors.js';
export * from './graph.js';
export * from './hash.js';
export * from './intent.js';
export * from './journal.js';
export * from './marker.js';
export * from './provider.js';
export * from './refs.js';
export * from './status.js';
export * from './diff.js';
export * from './plan.js';
export * from './changeset.js';
export * from './similar.js';
export * from './safe-keys.js';
