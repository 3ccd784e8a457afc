// Providers: the generic OpenAPI provider, which manages any REST API from its OpenAPI document.
export type {
  LoadOpenApiProviderOptions,
  OpenApiProvider,
  OpenApiProviderOptions,
} from './openapi/openapi-provider.js';
export { createOpenApiProvider, loadOpenApiProvider } from './openapi/openapi-provider.js';
export type { LoadDocumentOptions, OpenApiDocument } from './openapi/document/load-document.js';
export {
  DOCUMENT_LIMITS,
  loadOpenApiDocument,
  prepareOpenApiDocument,
  readRawDocument,
} from './openapi/document/load-document.js';
export type {
  DerivedType,
  DerivedTypes,
  EmbeddedAccess,
  ListShape,
  OperationRef,
  UnmappedPath,
} from './openapi/derive-types.js';
export type { PathParam } from './openapi/shapes/item-create.js';
export { deriveTypes } from './openapi/derive-types.js';
export type { InspectReport, InspectedOperation, InspectedType } from './openapi/inspect.js';
export { inspectOpenApi } from './openapi/inspect.js';
export { overlaySkeleton } from './openapi/overlay-skeleton.js';
export type { Overlay, OverlayAction } from './openapi/document/overlay.js';
export { applyOverlay, parseOverlay } from './openapi/document/overlay.js';
export type { NormalizeOp } from './openapi/fields/annotations.js';
export { NORMALIZE_OPS, TEND_EXTENSIONS } from './openapi/fields/annotations.js';
export type {
  HttpCall,
  HttpCallObserver,
  HttpClient,
  HttpClientOptions,
  HttpMethod,
  HttpRequest,
  HttpResponse,
} from './openapi/transport/http-client.js';
export { createHttpClient } from './openapi/transport/http-client.js';
export type { Clock, Sleep } from './openapi/transport/timing.js';
export { platformReason } from './openapi/transport/http-client.js';
// What `tend providers probe` decides from the platform's answers, and the overlay it writes.
export * from './openapi/probe/facts.js';
export type { SchemaLocation } from './openapi/probe/targets.js';
export type { ProbeAction, ProbeOverlayInput } from './openapi/probe/overlay-writer.js';
export { probeActions, probeOverlay } from './openapi/probe/overlay-writer.js';
export type { ProbeSubject } from './openapi/probe/subject.js';
export { markerValue, probeSubject } from './openapi/probe/subject.js';
// PostgreSQL without its driver: the one connection module (it only builds `pg`'s configuration)
// and the ids. Everything that loads the `pg` driver is in ./postgres/index.ts, which the application
// layer imports with `import()` where PostgreSQL is used, so that a command that uses no PostgreSQL
// does not load it (docs/decisions/0033-lazy-modules.md).
export type { PgConnection, PgConnectionOptions } from './postgres/connection.js';
export { describeConnection, resolveConnection } from './postgres/connection.js';
export type { GrantOn, GrantTarget } from './postgres/ids.js';
export {
  databaseId,
  extensionId,
  grantId,
  parseGrantId,
  roleId,
  schemaId,
} from './postgres/ids.js';
