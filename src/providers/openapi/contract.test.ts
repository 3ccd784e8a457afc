import { startSandbox } from '../../sandbox/index.js';
import type { RunningSandbox } from '../../sandbox/index.js';
import { describeProvider } from '../../../test/support/provider-contract.js';
import { loadOpenApiProvider } from './openapi-provider.js';

// The shared provider contract (test/support/provider-contract.ts) on the sandbox platform: a type
// found by its marker with idempotent creates (networks) and a natural-key type (buckets).

let sb: RunningSandbox | undefined;

describeProvider({
  name: 'openapi on the sandbox',
  async start() {
    sb = await startSandbox({ port: 0 });
    return loadOpenApiProvider({
      name: 'p',
      spec: `${sb.url}/openapi.json`,
      endpoint: sb.url,
      workspace: 'contract',
    });
  },
  stop: async () => {
    await sb?.close();
  },
  cases: [
    {
      type: 'networks',
      create: (n) => ({ name: `net-${n}`, cidr: `10.${n}.0.0/16` }),
      update: (n) => ({ name: `net-${n}-renamed` }),
      updated: (n) => ({ name: `net-${n}-renamed` }),
      carriesMarker: true,
    },
    {
      type: 'buckets',
      create: (n) => ({ name: `bucket-${n}`, versioning: false }),
      update: () => ({ versioning: true }),
      updated: () => ({ versioning: true }),
      carriesMarker: true,
    },
  ],
});
