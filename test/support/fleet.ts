// What the fleet's end-to-end tests share (test/e2e/fleet*.test.ts): the JSON of `tend fleet status`,
// a worker's `--json` log line, the intent of a workspace holding one sandbox service, and a query of
// the fleet's database.

/** `tend fleet status --json` (docs/fleet.md). */
export interface FleetJson {
  workers: { id: string; host: string; pid: number; version: string; heartbeatAt: string }[];
  /** Workers past their TTL whose rows are not deleted yet. */
  deadWorkers: { id: string; host: string; pid: number; version: string; heartbeatAt: string }[];
  workspaces: {
    name: string;
    holder: { worker: string | null; host: string; pid: number } | null;
    epoch: number | null;
    lastPassAt: string | null;
    states: Record<string, number>;
  }[];
}

/** One line of `tend worker --json`. */
export interface WorkerLine {
  time: string;
  worker: string;
  kind: string;
  workspace?: string;
  epoch?: number;
  message?: string;
  code?: string;
  hint?: string;
  reason?: string;
  pass?: number;
  states?: Record<string, number>;
}

/** A workspace's intent: its Workspace document and one service named after it (`api-<name>`). */
export function serviceIntent(sandbox: string, name: string, replicas: number): string {
  return `kind: Workspace
name: ${name}
---
kind: Provider
name: sb
type: openapi
spec: ${sandbox}/openapi.json
endpoint: ${sandbox}
---
kind: Resource
type: sb.services
name: api
spec:
  name: api-${name}
  image: nginx:1.27
  replicas: ${replicas}
`;
}

/** The HTTP methods that change a platform. */
export const MUTATIONS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export { sqlRows } from './postgres.js';
