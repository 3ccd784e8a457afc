// From the DDL audit's rows to the provider's objects (docs/postgres-audit.md, "Wiring"): which of
// the provider's types and ids a row is about. Schemas and extensions are named by PostgreSQL's
// object identity; grants have none (PostgreSQL reports only their kind), so their ids are parsed,
// conservatively, from the statement the client sent: exactly one GRANT/REVOKE/ALTER DEFAULT
// PRIVILEGES with a single object and a single grantee, or nothing.
import type { AuditEntry } from './ddl-audit.js';
import { identityNames } from './ddl-audit.js';
import type { GrantTarget } from './ids.js';
import { extensionId, grantId, schemaId } from './ids.js';

/** What the provider calls a row's object: its type and id. */
export interface AuditObject {
  readonly type: string;
  readonly id: string;
}

/** An identifier as written in SQL: double-quoted (`""` for a quote) or plain (folded to lower case). */
const ID = '("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)';
const PRIVS = '(?:GRANT\\s+OPTION\\s+FOR\\s+)?[A-Za-z][A-Za-z ,]*?';
const END = '\\s*(?:CASCADE|RESTRICT)?\\s*(?:;|$)';

function unquote(text: string): string {
  return text.startsWith('"') ? text.slice(1, -1).replace(/""/g, '"') : text.toLowerCase();
}

const KIND_TARGET: Readonly<Record<string, { all: GrantTarget; default: GrantTarget }>> = {
  TABLES: { all: 'allTablesInSchema', default: 'defaultTablesInSchema' },
  SEQUENCES: { all: 'allSequencesInSchema', default: 'defaultSequencesInSchema' },
  FUNCTIONS: { all: 'allFunctionsInSchema', default: 'defaultFunctionsInSchema' },
};

const PATTERNS: readonly { re: RegExp; id: (m: RegExpExecArray) => string }[] = [
  {
    // GRANT USAGE ON SCHEMA app TO reader / REVOKE … FROM reader
    re: new RegExp(
      `\\b(?:GRANT|REVOKE)\\s+${PRIVS}\\s+ON\\s+SCHEMA\\s+${ID}\\s+(?:TO|FROM)\\s+${ID}${END}`,
      'gi',
    ),
    id: (m) => grantId({ target: 'schema', name: unquote(m[1]!) }, unquote(m[2]!)),
  },
  {
    // GRANT SELECT ON ALL TABLES IN SCHEMA app TO reader
    re: new RegExp(
      `\\b(?:GRANT|REVOKE)\\s+${PRIVS}\\s+ON\\s+ALL\\s+(TABLES|SEQUENCES|FUNCTIONS)\\s+IN\\s+SCHEMA\\s+${ID}\\s+(?:TO|FROM)\\s+${ID}${END}`,
      'gi',
    ),
    id: (m) =>
      grantId(
        { target: KIND_TARGET[m[1]!.toUpperCase()]!.all, name: unquote(m[2]!) },
        unquote(m[3]!),
      ),
  },
  {
    // ALTER DEFAULT PRIVILEGES FOR ROLE owner IN SCHEMA app GRANT SELECT ON TABLES TO reader
    re: new RegExp(
      `\\bALTER\\s+DEFAULT\\s+PRIVILEGES\\s+FOR\\s+(?:ROLE|USER)\\s+${ID}\\s+IN\\s+SCHEMA\\s+${ID}\\s+(?:GRANT|REVOKE)\\s+${PRIVS}\\s+ON\\s+(TABLES|SEQUENCES|FUNCTIONS)\\s+(?:TO|FROM)\\s+${ID}${END}`,
      'gi',
    ),
    id: (m) =>
      grantId(
        {
          target: KIND_TARGET[m[3]!.toUpperCase()]!.default,
          name: unquote(m[2]!),
          forRole: unquote(m[1]!),
        },
        unquote(m[4]!),
      ),
  },
];

/**
 * The grant id a statement changes, when the text holds exactly one GRANT, REVOKE or ALTER DEFAULT
 * PRIVILEGES the provider can name (one schema, one grantee; string literals, such as those of
 * `SET tend.motivation = '…'`, are blanked first). Undefined otherwise: a grant on several objects
 * or to several roles, a column grant, one on a table, or anything ambiguous.
 */
export function grantIdOfStatement(statement: string): string | undefined {
  // Literals blanked, then each statement on its own (split at semicolons).
  const text = statement.replace(/'(?:[^']|'')*'/g, "''");
  const ids: string[] = [];
  for (const piece of text.split(';')) {
    const one = piece.trim();
    for (const p of PATTERNS) {
      p.re.lastIndex = 0;
      for (let m = p.re.exec(one); m !== null; m = p.re.exec(one)) ids.push(p.id(m));
    }
  }
  return ids.length === 1 ? ids[0] : undefined;
}

/**
 * The provider's object an audit row is about: a schema or an extension by its identity, a grant
 * by its statement (see `grantIdOfStatement`). Undefined for everything else (tables, functions,
 * an extension's member functions, …): the provider does not manage those.
 */
export function auditObjectOf(
  objectType: string,
  identity: string,
  entry: Pick<AuditEntry, 'commandTag' | 'statement'>,
): AuditObject | undefined {
  const tag = entry.commandTag.toUpperCase();
  if (tag === 'GRANT' || tag === 'REVOKE' || tag === 'ALTER DEFAULT PRIVILEGES') {
    const id = grantIdOfStatement(entry.statement ?? '');
    return id === undefined ? undefined : { type: 'grant', id };
  }
  if (objectType !== 'schema' && objectType !== 'extension') return undefined;
  const names = identityNames(identity);
  if (names?.length !== 1) return undefined;
  return objectType === 'schema'
    ? { type: 'schema', id: schemaId(names[0]!) }
    : { type: 'extension', id: extensionId(names[0]!) };
}
