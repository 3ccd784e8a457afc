import pg from 'pg';
import type { PostgresHandle } from '../../../test/support/postgres.js';
import { POSTGRES, startPostgres } from '../../../test/support/postgres.js';
import { describeProvider } from '../../../test/support/provider-contract.js';
import { resolveConnection } from './connection.js';
import { createPostgresProvider } from './postgres-provider.js';

// The shared provider contract (test/support/provider-contract.ts) on a real PostgreSQL cluster,
// for every type of the native provider. Grants need a grantee: roles grantee_1… exist beforehand.

let server: PostgresHandle | undefined;

describeProvider({
  name: 'postgres on a real cluster',
  ...(POSTGRES.skip ? { skip: POSTGRES.reason } : {}),
  async start() {
    server = await startPostgres();
    const admin = new pg.Client({ connectionString: server.url() });
    await admin.connect();
    for (let i = 1; i <= 40; i++) await admin.query(`CREATE ROLE grantee_${i}`);
    await admin.end();
    return createPostgresProvider({
      name: 'p',
      connection: resolveConnection({ url: server.url() }, {}),
    });
  },
  stop: async () => {
    await server?.stop();
  },
  cases: [
    {
      type: 'role',
      create: (n) => ({ name: `Role ${n}`, login: false, member_of: [`grantee_${n}`] }),
      update: (n) => ({ name: `Role ${n}`, connection_limit: 3, member_of: [] }),
      updated: () => ({ connection_limit: 3, member_of: [] }),
      carriesMarker: true,
    },
    {
      type: 'database',
      create: (n) => ({ name: `db_${n}` }),
      update: (n) => ({ name: `db_${n}`, owner: `grantee_${n}` }),
      updated: (n) => ({ owner: `grantee_${n}` }),
      carriesMarker: true,
    },
    {
      type: 'schema',
      create: (n) => ({ name: `Schema ${n}` }),
      update: (n) => ({ name: `Schema ${n}`, owner: `grantee_${n}`, comment: 'renamed owner' }),
      updated: (n) => ({ owner: `grantee_${n}` }),
      carriesMarker: true,
    },
    {
      type: 'extension',
      create: () => ({ name: 'pgcrypto' }),
      update: () => ({ name: 'pgcrypto', comment: 'hashes' }),
      updated: () => ({ name: 'pgcrypto' }),
      carriesMarker: true,
    },
    {
      type: 'grant',
      create: (n) => ({
        role: `grantee_${n}`,
        on: { database: 'postgres' },
        privileges: ['CONNECT'],
      }),
      update: (n) => ({
        role: `grantee_${n}`,
        on: { database: 'postgres' },
        privileges: ['connect', 'temp'],
      }),
      updated: () => ({ privileges: ['CONNECT', 'TEMPORARY'] }),
      carriesMarker: false,
    },
  ],
});
