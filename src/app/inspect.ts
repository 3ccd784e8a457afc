import type { InspectReport } from '../providers/index.js';
import { inspectOpenApi } from '../providers/index.js';

/** What `providers inspect` is asked: an OpenAPI or Swagger document and an optional overlay. */
export interface InspectRequest {
  readonly spec: string;
  readonly overlay?: string;
}

/** What Tend would manage from an API description: types, identities, and paths it skipped. */
export function inspectProvider(request: InspectRequest): Promise<InspectReport> {
  return inspectOpenApi(request.spec, request.overlay ? { overlay: request.overlay } : {});
}
