import { describe, expect, it } from 'vitest';
import { pgError } from './errors.js';

// What a PostgreSQL failure means to Tend: retry or not, and whether a change may have happened.

function pgFailure(message: string, code?: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

describe('pgError', () => {
  const cases: {
    reason: string;
    error: Error;
    mutating: boolean;
    want: { code: string; retryable: boolean; outcomeUnknown: boolean };
  }[] = [
    {
      reason: 'a lock timeout changed nothing and may pass next time',
      error: pgFailure('canceling statement due to lock timeout', '55P03'),
      mutating: true,
      want: { code: 'postgres.lock_timeout', retryable: true, outcomeUnknown: false },
    },
    {
      reason: 'a statement timeout is retried',
      error: pgFailure('canceling statement due to statement timeout', '57014'),
      mutating: true,
      want: { code: 'postgres.statement_timeout', retryable: true, outcomeUnknown: false },
    },
    {
      reason: 'a connection lost while a change was in flight leaves the outcome unknown',
      error: pgFailure('Connection terminated unexpectedly'),
      mutating: true,
      want: { code: 'postgres.connection', retryable: true, outcomeUnknown: true },
    },
    {
      reason: 'a server shutting down mid-statement leaves it unknown too',
      error: pgFailure('terminating connection due to administrator command', '57P01'),
      mutating: true,
      want: { code: 'postgres.connection', retryable: true, outcomeUnknown: true },
    },
    {
      reason: 'a failed read is only retried',
      error: pgFailure('connect ECONNREFUSED 127.0.0.1:5432'),
      mutating: false,
      want: { code: 'postgres.connection', retryable: true, outcomeUnknown: false },
    },
    {
      reason: 'a missing privilege needs a person',
      error: pgFailure('permission denied to create role', '42501'),
      mutating: true,
      want: { code: 'postgres.permission_denied', retryable: false, outcomeUnknown: false },
    },
    {
      reason: 'a name already taken',
      error: pgFailure('role "app" already exists', '42710'),
      mutating: true,
      want: { code: 'postgres.already_exists', retryable: false, outcomeUnknown: false },
    },
    {
      reason: 'an unknown SQLSTATE is a plain, final error',
      error: pgFailure('something else', 'XX000'),
      mutating: true,
      want: { code: 'postgres.error', retryable: false, outcomeUnknown: false },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const e = pgError(c.error, 'creating role "app"', c.mutating);
      expect({ code: e.code, retryable: e.retryable, outcomeUnknown: e.outcomeUnknown }).toEqual(
        c.want,
      );
      expect(e.message.startsWith(`creating role "app": ${c.error.message}`)).toBe(true);
      expect(e.hint).toBeTruthy();
    });
  }
});
