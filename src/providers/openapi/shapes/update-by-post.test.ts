import { describe, expect, it } from 'vitest';
import { postUpdate } from './update-by-post.js';

type Obj = Record<string, unknown>;

const OBJECT = {
  type: 'object',
  properties: { id: { type: 'string' }, name: { type: 'string' }, size: { type: 'integer' } },
};
const answer = (schema: Obj = OBJECT) => ({
  '200': { description: 'ok', content: { 'application/json': { schema } } },
});
const form = (schema: Obj) => ({
  requestBody: { content: { 'application/x-www-form-urlencoded': { schema } } },
});
const create = { ...form(OBJECT), responses: answer() };
const body = (properties: Obj, required?: string[]) => ({
  type: 'object',
  properties,
  ...(required ? { required } : {}),
});
const item = (post: Obj | undefined, extra: Obj = {}): Obj => ({
  get: { responses: answer() },
  ...(post ? { post } : {}),
  ...extra,
});
const FIELDS = ['name', 'size'];

describe('postUpdate', () => {
  it.each([
    {
      name: 'a POST taking create fields and answering the object',
      reason: 'Stripe: POST /v1/customers/{customer} updates',
      item: item({ ...form(body({ name: {} })), responses: answer() }),
      want: ['name'],
    },
    {
      name: 'a POST with no answer schema',
      reason: 'an update may answer 204: the object is read back',
      item: item({
        ...form(body({ name: {}, size: {} })),
        responses: { '204': { description: 'done' } },
      }),
      want: ['name', 'size'],
    },
    {
      name: 'a POST with one field the create does not have',
      reason: 'half or more of its fields are the create body’s',
      item: item({ ...form(body({ name: {}, default_price: {} })), responses: answer() }),
      want: ['name', 'default_price'],
    },
  ])('is the update: $name ($reason)', ({ item, want }) => {
    expect(postUpdate('/v/{id}', item, create, FIELDS)?.fields).toEqual(want);
  });

  it.each([
    { name: 'no POST', reason: 'nothing to take', item: item(undefined) },
    {
      name: 'a PATCH',
      reason: 'PATCH is the update where there is one',
      item: item(
        { ...form(body({ name: {} })), responses: answer() },
        { patch: { responses: answer() } },
      ),
    },
    {
      name: 'a PUT',
      reason: 'PUT is the update where there is one',
      item: item(
        { ...form(body({ name: {} })), responses: answer() },
        { put: { responses: answer() } },
      ),
    },
    {
      name: 'the create itself',
      reason: 'an API that creates by POST on the item path: that POST is not an update',
      item: item(create),
    },
    {
      name: 'no body',
      reason: 'an action without arguments (POST /v/{id}/cancel-like)',
      item: item({ responses: answer() }),
    },
    {
      name: 'a multipart body',
      reason: 'Tend cannot send it',
      item: item({
        requestBody: { content: { 'multipart/form-data': { schema: body({ name: {} }) } } },
        responses: answer(),
      }),
    },
    {
      name: 'an empty body schema',
      reason: 'no field to change',
      item: item({ ...form(body({})), responses: answer() }),
    },
    {
      name: 'a required argument the create does not have',
      reason: 'an action: it requires its own argument',
      item: item({ ...form(body({ name: {}, reason: {} }, ['reason'])), responses: answer() }),
    },
    {
      name: 'mostly other fields',
      reason: 'fewer than half of its fields are the create body’s: another operation',
      item: item({ ...form(body({ name: {}, a: {}, b: {} })), responses: answer() }),
    },
    {
      name: 'another answer',
      reason: 'it answers with something that is not the object (a receipt)',
      item: item({
        ...form(body({ name: {} })),
        responses: answer(body({ receipt: {}, at: {}, by: {} })),
      }),
    },
  ])('is not the update: $name ($reason)', ({ item }) => {
    expect(postUpdate('/v/{id}', item, create, FIELDS)).toBeUndefined();
  });

  it('says why in words', () => {
    const got = postUpdate(
      '/v/{id}',
      item({ ...form(body({ name: {} })), responses: answer() }),
      create,
      FIELDS,
    );
    expect(got?.why).toBe(
      'POST /v/{id} takes 1 of its 1 fields from the create body and answers with the object: an update of the fields it carries',
    );
  });
});
