import { describe, expect, it } from 'vitest';
import { requestMedia } from './request-media.js';

const S = { type: 'object', properties: { name: { type: 'string' } } };
const FORM = 'application/x-www-form-urlencoded';

describe('requestMedia', () => {
  it.each([
    {
      name: 'JSON',
      reason: 'a JSON body is sent as JSON',
      op: { requestBody: { content: { 'application/json': { schema: S } } } },
      want: { contentType: 'application/json', encoding: 'json', schema: S },
    },
    {
      name: 'JSON and a form',
      reason: 'JSON is preferred when both are offered',
      op: {
        requestBody: { content: { [FORM]: { schema: {} }, 'application/json': { schema: S } } },
      },
      want: { contentType: 'application/json', encoding: 'json', schema: S },
    },
    {
      name: 'a form only',
      reason: 'Stripe: every write is a form',
      op: { requestBody: { content: { [`${FORM}; charset=utf-8`]: { schema: S } } } },
      want: { contentType: FORM, encoding: 'form', schema: S },
    },
  ])('$name: $reason', ({ op, want }) => {
    expect(requestMedia(op, 'POST /x')).toEqual(want);
  });

  it.each([
    {
      name: 'no request body',
      op: {},
      reason:
        'POST /x declares no request body: Tend cannot tell what to send; if it takes one, describe it in an overlay (requestBody with a JSON or form schema)',
    },
    {
      name: 'a JSON body without a schema',
      op: { requestBody: { content: { 'application/json': {} } } },
      reason:
        'POST /x declares a application/json request body without a schema: Tend cannot tell what to send; give it a schema in an overlay',
    },
    {
      name: 'a form without a schema',
      op: { requestBody: { content: { [FORM]: {} } } },
      reason: `POST /x declares a ${FORM} request body without a schema: Tend cannot tell what to send; give it a schema in an overlay`,
    },
    {
      name: 'no media type',
      op: { requestBody: { content: {} } },
      reason:
        'POST /x declares a request body with no media type: Tend cannot tell what to send; describe it in an overlay (a JSON or form schema)',
    },
    {
      name: 'multipart only',
      op: { requestBody: { content: { 'multipart/form-data': { schema: S } } } },
      reason: `POST /x takes only multipart/form-data: Tend does not send multipart bodies (file uploads), only JSON and ${FORM}`,
    },
    {
      name: 'another media type',
      op: { requestBody: { content: { 'application/x-tar': {} } } },
      reason: `POST /x takes only application/x-tar: Tend sends JSON or ${FORM} bodies; if the API also accepts JSON, say so in an overlay`,
    },
  ])('says why for $name', ({ op, reason }) => {
    expect(requestMedia(op, 'POST /x')).toEqual({ reason });
  });
});
