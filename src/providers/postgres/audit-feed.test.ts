import { describe, expect, it } from 'vitest';
import { auditObjectOf, grantIdOfStatement } from './audit-feed.js';

// Which of the provider's objects an audit row is about. Grants carry no identity in PostgreSQL's
// report, so their ids come from the statement text: exactly one that names a single object and a
// single grantee, or nothing.

describe('grantIdOfStatement', () => {
  it.each([
    ['REVOKE USAGE ON SCHEMA app FROM app_readers', 'schema:app:app_readers'],
    ['grant usage, create on schema app to app_readers;', 'schema:app:app_readers'],
    ['GRANT USAGE ON SCHEMA "My Schema" TO "Odd ""role"""', 'schema:My Schema:Odd "role"'],
    ['GRANT USAGE ON SCHEMA App TO Readers', 'schema:app:readers'],
    ['REVOKE GRANT OPTION FOR USAGE ON SCHEMA app FROM r CASCADE', 'schema:app:r'],
    ['GRANT SELECT ON ALL TABLES IN SCHEMA app TO r', 'allTablesInSchema:app:r'],
    ['REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA app FROM r', 'allFunctionsInSchema:app:r'],
    ['GRANT USAGE ON ALL SEQUENCES IN SCHEMA app TO r', 'allSequencesInSchema:app:r'],
    [
      'ALTER DEFAULT PRIVILEGES FOR ROLE app IN SCHEMA app REVOKE SELECT ON TABLES FROM app_readers',
      'defaultTablesInSchema:app:app:app_readers',
    ],
    [
      'ALTER DEFAULT PRIVILEGES FOR USER o IN SCHEMA s GRANT USAGE ON SEQUENCES TO r',
      'defaultSequencesInSchema:s:o:r',
    ],
    // The session's SETs around it, as psql sends them in one query.
    [
      "SET tend.actor = 'alice'; SET tend.motivation = 'incident:INC-7'; REVOKE USAGE ON SCHEMA app FROM r",
      'schema:app:r',
    ],
    // A colon in a name is escaped in the id, as ids.ts makes it.
    ['GRANT USAGE ON SCHEMA "a:b" TO r', 'schema:a%3Ab:r'],
  ])('%s → %s', (statement, id) => {
    expect(grantIdOfStatement(statement)).toBe(id);
  });

  it.each([
    ['several grantees', 'GRANT USAGE ON SCHEMA app TO a, b'],
    ['several schemas', 'GRANT USAGE ON SCHEMA a, b TO r'],
    ['a table (not a provider object)', 'GRANT SELECT ON TABLE app.t TO r'],
    ['a database (fires no event trigger anyway)', 'GRANT CONNECT ON DATABASE app TO r'],
    ['two grants in one query', 'GRANT USAGE ON SCHEMA a TO r; GRANT USAGE ON SCHEMA b TO r'],
    [
      'default privileges without FOR ROLE',
      'ALTER DEFAULT PRIVILEGES IN SCHEMA s GRANT SELECT ON TABLES TO r',
    ],
    ['GRANTED BY', 'GRANT USAGE ON SCHEMA app TO r GRANTED BY postgres'],
    [
      'a grant only inside a string literal',
      "SET tend.motivation = 'GRANT USAGE ON SCHEMA x TO y'",
    ],
    ['an unterminated quoted name', 'GRANT USAGE ON SCHEMA "app TO r'],
    ['nothing', ''],
  ])('%s: no id', (_what, statement) => {
    expect(grantIdOfStatement(statement)).toBeUndefined();
  });
});

describe('auditObjectOf', () => {
  const row = (commandTag: string, statement = '') => ({ commandTag, statement });
  it.each([
    ['schema', 'app', row('ALTER SCHEMA'), { type: 'schema', id: 'app' }],
    ['schema', '"Odd ""name"""', row('CREATE SCHEMA'), { type: 'schema', id: 'Odd "name"' }],
    ['extension', 'pgcrypto', row('ALTER EXTENSION'), { type: 'extension', id: 'pgcrypto' }],
    ['schema', 'app', row('DROP SCHEMA'), { type: 'schema', id: 'app' }],
    [
      'SCHEMA',
      '',
      row('REVOKE', 'REVOKE USAGE ON SCHEMA app FROM r'),
      { type: 'grant', id: 'schema:app:r' },
    ],
    [
      'TABLES',
      '',
      row(
        'ALTER DEFAULT PRIVILEGES',
        'ALTER DEFAULT PRIVILEGES FOR ROLE o IN SCHEMA s GRANT SELECT ON TABLES TO r',
      ),
      { type: 'grant', id: 'defaultTablesInSchema:s:o:r' },
    ],
  ])('%s %s (%o) → %o', (objectType, identity, entry, expected) => {
    expect(auditObjectOf(objectType, identity, entry)).toEqual(expected);
  });

  it.each([
    ['a table', 'table', 'app.orders', row('CREATE TABLE')],
    [
      "an extension's member function",
      'function',
      'public.digest(text,text)',
      row('CREATE FUNCTION'),
    ],
    ['a dotted identity for a schema', 'schema', 'a.b', row('ALTER SCHEMA')],
    ['an identity that is not one', 'schema', 'Not Quoted', row('ALTER SCHEMA')],
    ['a grant on a table', 'TABLE', '', row('GRANT', 'GRANT SELECT ON app.t TO r')],
    ['a grant whose statement is missing', 'SCHEMA', '', { commandTag: 'GRANT' }],
  ])('%s: not managed', (_what, objectType, identity, entry) => {
    expect(auditObjectOf(objectType, identity, entry)).toBeUndefined();
  });
});
