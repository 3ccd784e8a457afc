// The User-Agent Tend sends on every request to a platform, built in one place (decision 0040).

/** Who is sending: Tend's version and, when known, the process (a fleet worker's id, the pid). */
export interface UserAgentParts {
  /** Tend's version (package.json). */
  readonly version: string;
  /** The worker's identity (`TEND_WORKER_ID`, or what `tend worker` names itself). */
  readonly worker?: string;
  readonly pid?: number;
}

/**
 * `tend/<version>`, then the process in parentheses when known: `tend/0.1.0 (worker w-abc; pid 123)`,
 * so that a platform's request log tells which worker sent a mutation. A worker id is cut to 64
 * characters of letters, digits and `._:@-` (anything else becomes `_`): it ends up in a header.
 */
export function userAgent(parts: UserAgentParts): string {
  const who: string[] = [];
  const worker = parts.worker?.trim();
  if (worker) who.push(`worker ${worker.replace(/[^A-Za-z0-9._:@-]/g, '_').slice(0, 64)}`);
  if (parts.pid !== undefined && Number.isSafeInteger(parts.pid)) who.push(`pid ${parts.pid}`);
  const version = parts.version.replace(/[^A-Za-z0-9.+-]/g, '_');
  return who.length > 0 ? `tend/${version} (${who.join('; ')})` : `tend/${version}`;
}

/**
 * The headers of a request with Tend's User-Agent added, unless the headers already name one (an
 * explicit User-Agent wins, whatever its case).
 */
export function withUserAgent(
  headers: Readonly<Record<string, string>>,
  agent: string | undefined,
): Record<string, string> {
  const out = { ...headers };
  if (agent === undefined) return out;
  if (Object.keys(out).some((k) => k.toLowerCase() === 'user-agent')) return out;
  out['user-agent'] = agent;
  return out;
}
