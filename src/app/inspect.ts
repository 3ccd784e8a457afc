import { writeFileSync } from 'node:fs';
import { TendError } from '../core/index.js';
import type { InspectReport } from '../providers/index.js';
import { inspectOpenApi, overlaySkeleton } from '../providers/index.js';

/** What `providers inspect` is asked: an OpenAPI or Swagger document and an optional overlay. */
export interface InspectRequest {
  readonly spec: string;
  readonly overlay?: string;
  /** Sent as User-Agent when fetching them (`processUserAgent`). */
  readonly userAgent?: string;
}

/** What Tend would manage from an API description: types, identities, and paths it skipped. */
export function inspectProvider(request: InspectRequest): Promise<InspectReport> {
  return inspectOpenApi(request.spec, {
    ...(request.overlay ? { overlay: request.overlay } : {}),
    ...(request.userAgent !== undefined ? { userAgent: request.userAgent } : {}),
  });
}

/** The OpenAPI Overlay 1.0 stub with the decisions inference left open, as YAML text. */
export function inspectSkeleton(report: InspectReport): string {
  return overlaySkeleton(report);
}

/**
 * Writes the overlay stub to a new file; an existing file is never overwritten (it may be the
 * overlay someone wrote): `inspect.file_exists`, saying what to do.
 */
export function writeOverlaySkeleton(report: InspectReport, file: string): void {
  try {
    writeFileSync(file, overlaySkeleton(report), { flag: 'wx', mode: 0o644 });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      throw new TendError(
        'inspect.file_exists',
        `${file} already exists; Tend does not overwrite it with an overlay stub`,
        { hint: 'name a new file, or remove the old one first' },
      );
    }
    throw new TendError(
      'inspect.write_failed',
      `cannot write the overlay stub to ${file}: ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
}
