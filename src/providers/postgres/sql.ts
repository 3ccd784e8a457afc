// Quoting for the statements the PostgreSQL provider sends; each type's module (role.ts,
// database.ts, …) builds its own DDL with it. DDL takes no bind parameters, so every name goes
// through `pg.escapeIdentifier` and every value through `pg.escapeLiteral` (or is a number the
// builder checks): a name with quotes, spaces or capitals is one identifier, exactly as written, and
// a name designed as SQL injection is just a strange name.
import pg from 'pg';

/** A name as one SQL identifier, exactly as written (`"Team ""Core"""`). */
export const ident = (name: string): string => pg.escapeIdentifier(name);

/** A text as one SQL string literal. */
export const literal = (text: string): string => pg.escapeLiteral(text);
