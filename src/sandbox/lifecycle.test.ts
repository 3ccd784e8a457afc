import { describe, expect, it } from 'vitest';
import { createSandbox } from './app.js';
import { sandboxClient } from './client.js';
import { evaluateLifecycle, type LifecycleEvaluation } from './lifecycle.js';
import { typeSpec, type TypeName } from './spec.js';

const volume = {
  id: 'vol-0000000a',
  name: 'data',
  instance_id: 'i-00000001',
  size: 100,
  tags: { env: 'prod' },
  status: 'attached',
};
const network = {
  id: 'net-0000000a',
  name: 'main',
  cidr: '10.0.0.0/16',
  tags: { env: 'prod', team: 'a' },
  status: 'available',
};
const instance = {
  id: 'i-0000000a',
  name: 'web',
  network_id: 'net-0000000a',
  size: 'small',
  image: 'debian-12',
  status: 'running',
};

describe('evaluateLifecycle', () => {
  const cases: {
    name: string;
    reason: string;
    type: TypeName;
    current: Record<string, unknown>;
    desired: Record<string, unknown>;
    want: LifecycleEvaluation;
  }[] = [
    {
      name: 'nothing differs',
      reason: 'equal declared fields need no change',
      type: 'volumes',
      current: volume,
      desired: { name: 'data', size: 100 },
      want: {
        action: 'none',
        fields: [],
        reason: 'every given field already has its desired value',
      },
    },
    {
      name: 'undeclared fields are not compared',
      reason: 'only keys present in desired count',
      type: 'networks',
      current: network,
      desired: {},
      want: {
        action: 'none',
        fields: [],
        reason: 'every given field already has its desired value',
      },
    },
    {
      name: 'volume grows',
      reason: 'growing is an in-place update',
      type: 'volumes',
      current: volume,
      desired: { size: 200 },
      want: { action: 'update', fields: ['size'], reason: 'size can change in place' },
    },
    {
      name: 'volume shrinks',
      reason: 'shrinking is known only to the platform and needs a replace',
      type: 'volumes',
      current: volume,
      desired: { size: 50, name: 'data2' },
      want: {
        action: 'replace',
        fields: ['size'],
        reason: 'volumes cannot shrink in place: replace the volume',
      },
    },
    {
      name: 'create-only field differs',
      reason: 'cidr is x-tend-immutable',
      type: 'networks',
      current: network,
      desired: { cidr: '10.1.0.0/16', name: 'other' },
      want: {
        action: 'replace',
        fields: ['cidr'],
        reason: 'cidr cannot change after create: replace the network',
      },
    },
    {
      name: 'create-only field equal, another differs',
      reason: 'an unchanged create-only field forces nothing',
      type: 'instances',
      current: instance,
      desired: { image: 'debian-12', size: 'large' },
      want: { action: 'update', fields: ['size'], reason: 'size can change in place' },
    },
    {
      name: 'tags compared only for declared keys (equal)',
      reason: 'a tag added by someone else is not drift',
      type: 'networks',
      current: network,
      desired: { tags: { env: 'prod' } },
      want: {
        action: 'none',
        fields: [],
        reason: 'every given field already has its desired value',
      },
    },
    {
      name: 'tags compared only for declared keys (differ)',
      reason: 'a declared tag with another value is an update',
      type: 'networks',
      current: network,
      desired: { tags: { env: 'dev' } },
      want: { action: 'update', fields: ['tags'], reason: 'tags can change in place' },
    },
    {
      name: 'secrets are never compared',
      reason: 'reads never return admin_password, so it would always differ',
      type: 'instances',
      current: instance,
      desired: { admin_password: 'x' },
      want: {
        action: 'none',
        fields: [],
        reason: 'every given field already has its desired value',
      },
    },
    {
      name: 'a field missing from current differs',
      reason: 'setting an optional field is an update',
      type: 'services',
      current: { id: 'svc-00000001', name: 's', image: 'x', replicas: 1 },
      desired: { network_id: 'net-0000000a' },
      want: { action: 'update', fields: ['network_id'], reason: 'network_id can change in place' },
    },
  ];

  for (const c of cases) {
    it(`${c.name} (${c.reason})`, () => {
      expect(evaluateLifecycle(typeSpec(c.type)!, c.current, c.desired)).toEqual(c.want);
    });
  }
});

describe('POST /lifecycle/evaluate', () => {
  const api = sandboxClient(createSandbox().app);

  it('answers with the evaluation, ignoring read-only fields in desired', async () => {
    const reply = await api.post('/lifecycle/evaluate', {
      type: 'volumes',
      current: volume,
      desired: { size: 10, status: 'whatever' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      action: 'replace',
      fields: ['size'],
      reason: 'volumes cannot shrink in place: replace the volume',
    });
  });

  it.each([
    {
      name: 'unknown type',
      body: { type: 'disks', current: {}, desired: {} },
      field: 'type',
      message: 'type must be one of networks, instances, volumes, buckets, services',
    },
    {
      name: 'unknown desired field',
      body: { type: 'volumes', current: volume, desired: { iops: 3000 } },
      field: 'desired.iops',
      message: 'desired: unknown field "iops": volumes has no such field',
    },
    {
      name: 'bad desired value',
      body: { type: 'volumes', current: volume, desired: { size: -1 } },
      field: 'desired.size',
      message: 'desired: size must be >= 1',
    },
    {
      name: 'current not an object',
      body: { type: 'volumes', current: 'vol-1', desired: {} },
      field: 'current',
      message: 'current must be the object as read now',
    },
    {
      name: 'missing desired',
      body: { type: 'volumes', current: volume },
      field: 'desired',
      message: 'missing required field "desired"',
    },
    {
      name: 'unknown top-level field',
      body: { type: 'volumes', current: volume, desired: {}, force: true },
      field: 'force',
      message: 'unknown field "force": send type, current and desired',
    },
  ])('$name → 400', async ({ body, field, message }) => {
    const reply = await api.post('/lifecycle/evaluate', body);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ code: 'invalid', field, message });
  });
});
