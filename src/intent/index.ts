// Intent: reading the user's YAML documents into a validated Intent, with every problem located.
export { intentContentHash, loadIntent } from './load-intent.js';
export { readIntentFiles } from './read-files.js';
export type { LoadIntentOptions, LoadIntentResult } from './load-intent.js';
export { CHECK_DEFAULTS } from './checks-doc.js';
export { PROVIDER_DEFAULTS, PROVIDER_TYPES } from './provider-doc.js';
export { isSecretRef } from './secret-rules.js';
export { SECRET_DIRS_VARIABLE, SPEC_DIRS_VARIABLE, inAnyRoot, trustedDirs } from './confine.js';
export type { TrustedDirs } from './confine.js';
export { closeSchema } from './close-schema.js';
export { createSpecValidator } from './schema-validate.js';
export type { SpecProblem, SpecValidator } from './schema-validate.js';
export { formatPath, positionOf } from './positions.js';
export type { PathSegment, Position } from './positions.js';
export { parseDocuments } from './parse-documents.js';
export type { ParsedDocument } from './parse-documents.js';
