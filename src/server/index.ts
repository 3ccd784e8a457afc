// The HTTP API of `tend serve` (docs/api.md): a thin adapter over src/app — it authenticates,
// authorises, validates, calls the application layer and renders JSON. Nothing here decides.
export type { ApiToken, Caller, Role } from './auth.js';
export {
  authenticate,
  loadTokens,
  MIN_TOKEN_LENGTH,
  readTokens,
  ROLES,
  TOKENS_VARIABLE,
} from './auth.js';
export type { ServerOptions } from './app.js';
export { app, statusOf } from './app.js';
export type { HubEvent } from './event-hub.js';
export { EventHub } from './event-hub.js';
export type { Listening } from './listen.js';
export { listen } from './listen.js';
export { Metrics } from './metrics.js';
export type { FleetMetricsOptions } from './fleet-metrics.js';
export { FleetMetrics } from './fleet-metrics.js';
export type { WorkerEndpointOptions } from './worker-app.js';
export { workerApp } from './worker-app.js';
export { openApiDocument } from './openapi.js';
export type { Route, RouteInput, RouteResult, Schema, ServerContext } from './routes.js';
export { evaluateLifecycle, ROUTES } from './routes.js';
export { fleetRoutes } from './fleet-routes.js';
