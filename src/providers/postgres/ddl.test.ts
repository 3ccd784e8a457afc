import { describe, expect, it } from 'vitest';
import { commentOn } from './comment.js';
import { createDatabase, dropDatabase } from './database.js';
import { createExtension, updateExtension } from './extension.js';
import { grantPrivileges, revokePrivileges } from './grant.js';
import { alterRole, createRole, grantMembership, revokeMembership } from './role.js';
import { createSchema } from './schema.js';

// The statements the provider sends (each type's DDL, built in its module), for names that need
// quoting and values that need escaping.

const INJECTION = 'x"; DROP ROLE postgres; --';

describe('SQL builders', () => {
  const cases: { reason: string; got: () => string | undefined; want: string | undefined }[] = [
    {
      reason: 'a plain role with flags, a limit and an expiry',
      got: () =>
        createRole('app', {
          login: true,
          superuser: false,
          connection_limit: 5,
          valid_until: '2027-01-01T00:00:00Z',
        }),
      want: `CREATE ROLE "app" WITH NOSUPERUSER LOGIN CONNECTION LIMIT 5 VALID UNTIL '2027-01-01T00:00:00Z'`,
    },
    {
      reason: 'capitals and spaces stay one identifier, exactly as written',
      got: () => createRole('Read Only', {}),
      want: 'CREATE ROLE "Read Only"',
    },
    {
      reason: 'a double quote inside a name is doubled',
      got: () => createRole('we"ird', {}),
      want: 'CREATE ROLE "we""ird"',
    },
    {
      reason: 'a name designed as SQL injection is just a name',
      got: () => createRole(INJECTION, {}),
      want: 'CREATE ROLE "x""; DROP ROLE postgres; --"',
    },
    {
      reason: 'a single quote in a value is escaped as a literal',
      got: () => commentOn('ROLE', 'app', "it's [tend:w/p.role/app]"),
      want: `COMMENT ON ROLE "app" IS 'it''s [tend:w/p.role/app]'`,
    },
    {
      reason: 'a backslash makes an E literal',
      got: () => commentOn('SCHEMA', 's', 'a\\b'),
      // pg.escapeLiteral puts a space before E: two spaces, still one literal.
      want: `COMMENT ON SCHEMA "s" IS  E'a\\\\b'`,
    },
    {
      reason: 'an empty comment removes it',
      got: () => commentOn('DATABASE', 'd', ''),
      want: 'COMMENT ON DATABASE "d" IS NULL',
    },
    {
      reason: 'the password is sent as the verifier given',
      got: () => alterRole('app', { passwordVerifier: 'SCRAM-SHA-256$4096:abc' }),
      want: `ALTER ROLE "app" WITH PASSWORD 'SCRAM-SHA-256$4096:abc'`,
    },
    {
      reason: 'nothing to alter is no statement',
      got: () => alterRole('app', {}),
      want: undefined,
    },
    {
      reason: 'no expiry is infinity',
      got: () => alterRole('app', { valid_until: null }),
      want: `ALTER ROLE "app" WITH VALID UNTIL 'infinity'`,
    },
    {
      reason: 'membership names both roles quoted',
      got: () => grantMembership('Group A', INJECTION),
      want: 'GRANT "Group A" TO "x""; DROP ROLE postgres; --"',
    },
    {
      reason: 'membership revoked',
      got: () => revokeMembership('g', 'm'),
      want: 'REVOKE "g" FROM "m"',
    },
    {
      reason: 'an encoding other than the template’s needs template0',
      got: () => createDatabase('App DB', { owner: 'app', encoding: 'LATIN1' }),
      want: `CREATE DATABASE "App DB" OWNER "app" TEMPLATE "template0" ENCODING 'LATIN1'`,
    },
    {
      reason: 'a declared template wins',
      got: () =>
        createDatabase('d', {
          template: 'tpl',
          lc_collate: 'C',
          lc_ctype: 'C',
          connection_limit: 2,
        }),
      want: `CREATE DATABASE "d" TEMPLATE "tpl" LC_COLLATE 'C' LC_CTYPE 'C' CONNECTION LIMIT 2`,
    },
    {
      reason: 'a bare database',
      got: () => createDatabase('d', {}),
      want: 'CREATE DATABASE "d"',
    },
    {
      reason: 'drops are IF EXISTS: a missing object is already deleted',
      got: () => dropDatabase('d'),
      want: 'DROP DATABASE IF EXISTS "d"',
    },
    {
      reason: 'schema with owner',
      got: () => createSchema('My Schema', 'app'),
      want: 'CREATE SCHEMA "My Schema" AUTHORIZATION "app"',
    },
    {
      reason: 'extension with schema and version',
      got: () => createExtension('pgcrypto', { schema: 'ext', version: '1.3' }),
      want: `CREATE EXTENSION "pgcrypto" WITH SCHEMA "ext" VERSION '1.3'`,
    },
    {
      reason: 'extension update',
      got: () => updateExtension('pgcrypto', "1.3'; --"),
      want: `ALTER EXTENSION "pgcrypto" UPDATE TO '1.3''; --'`,
    },
    {
      reason: 'grant on a database',
      got: () =>
        grantPrivileges({ target: 'database', name: 'App' }, 'app', ['CONNECT', 'TEMPORARY']),
      want: 'GRANT CONNECT, TEMPORARY ON DATABASE "App" TO "app"',
    },
    {
      reason: 'grant on all tables in a schema',
      got: () => grantPrivileges({ target: 'allTablesInSchema', name: 's' }, 'r', ['SELECT']),
      want: 'GRANT SELECT ON ALL TABLES IN SCHEMA "s" TO "r"',
    },
    {
      reason: 'default privileges for a role in a schema',
      got: () =>
        grantPrivileges({ target: 'defaultTablesInSchema', name: 's', forRole: 'Owner' }, 'r', [
          'SELECT',
          'INSERT',
        ]),
      want: 'ALTER DEFAULT PRIVILEGES FOR ROLE "Owner" IN SCHEMA "s" GRANT SELECT, INSERT ON TABLES TO "r"',
    },
    {
      reason: 'default privileges revoked',
      got: () =>
        revokePrivileges({ target: 'defaultFunctionsInSchema', name: 's', forRole: 'o' }, 'r', [
          'EXECUTE',
        ]),
      want: 'ALTER DEFAULT PRIVILEGES FOR ROLE "o" IN SCHEMA "s" REVOKE EXECUTE ON FUNCTIONS FROM "r"',
    },
    {
      reason: 'revoke on sequences',
      got: () => revokePrivileges({ target: 'allSequencesInSchema', name: 's' }, 'r', ['USAGE']),
      want: 'REVOKE USAGE ON ALL SEQUENCES IN SCHEMA "s" FROM "r"',
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(c.got()).toBe(c.want);
    });
  }

  const refused: { reason: string; got: () => unknown; message: string }[] = [
    {
      reason: 'a privilege the target does not have',
      got: () => grantPrivileges({ target: 'schema', name: 's' }, 'r', ['SELECT']),
      message: 'SELECT is not a privilege on schema (known: USAGE, CREATE)',
    },
    {
      reason: 'SQL in a privilege never reaches a statement',
      got: () => grantPrivileges({ target: 'database', name: 'd' }, 'r', ['CONNECT; DROP']),
      message: 'CONNECT; DROP is not a privilege on database (known: CREATE, CONNECT, TEMPORARY)',
    },
    {
      reason: 'no privileges',
      got: () => grantPrivileges({ target: 'database', name: 'd' }, 'r', []),
      message: 'a grant needs at least one privilege',
    },
    {
      reason: 'default privileges without forRole',
      got: () => grantPrivileges({ target: 'defaultTablesInSchema', name: 's' }, 'r', ['SELECT']),
      message: 'default privileges need forRole: the role whose future objects get them',
    },
    {
      reason: 'a connection limit that is not a whole number',
      got: () => createRole('r', { connection_limit: 1.5 }),
      message: 'connection_limit must be a whole number >= -1, not 1.5',
    },
  ];
  for (const c of refused) {
    it(`refuses ${c.reason}`, () => {
      expect(c.got).toThrow(c.message);
    });
  }
});
