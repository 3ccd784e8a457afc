// The intent of the "intent changes" torture mode: a small world (networks, instances on them,
// stateful volumes attached to instances, buckets) that a seeded random walk changes between kills:
// resources added and removed, renamed (a new address, the same natural key), replaced (a create-only
// field changed, or a volume shrunk), updated, and re-pointed to another resource (dependency moves).
// Every change keeps the intent valid (no dangling reference), so what Tend meets is what a user
// editing the files between two runs would give it.
import type { CrashAction } from '../../src/engine/crash-points.js';

/** An instance: `sb.instances/<name>` on `sb.networks/<network>`. */
export interface InstanceSpec {
  readonly name: string;
  readonly network: string;
  readonly image: 'debian-12' | 'debian-13';
  readonly size: 'small' | 'medium' | 'large';
}

/** A stateful volume: `sb.volumes/<name>` attached to `sb.instances/<instance>`. */
export interface VolumeSpec {
  readonly name: string;
  readonly instance: string;
  readonly size: number;
}

/** A bucket: `sb.buckets/<address>`; `bucketName` is its natural key (its identity on the platform). */
export interface BucketSpec {
  readonly address: string;
  readonly bucketName: string;
  readonly versioning: boolean;
}

/** The whole intent. Networks are `sb.networks/<name>`, each with its own block. */
export interface World {
  readonly networks: readonly string[];
  readonly instances: readonly InstanceSpec[];
  readonly volumes: readonly VolumeSpec[];
  readonly buckets: readonly BucketSpec[];
  /** Counter for fresh names, so a name is never reused within a trial. */
  readonly next: number;
}

/** The kinds of change the walk makes. */
export type ChangeKind = 'add' | 'remove' | 'rename' | 'replace' | 'update' | 'move' | 'none';

/** One change to the world, with the crash actions its apply performs (where a kill can land). */
export interface Change {
  readonly kind: ChangeKind;
  readonly label: string;
  readonly world: World;
  readonly actions: readonly CrashAction[];
  /** For a rename: the bucket's natural key (its platform identity must survive). */
  readonly renamedBucket?: string;
  /** For a rename: the address the bucket had before. */
  readonly renamedFrom?: string;
  /** For a removal or replacement of a bucket: its natural key (its deletion is expected). */
  readonly droppedBucket?: string;
}

/** The world every trial starts from (applied fault-free before the first kill). */
export const START: World = {
  networks: ['n1', 'n2'],
  instances: [
    { name: 'a', network: 'n1', image: 'debian-12', size: 'small' },
    { name: 'b', network: 'n2', image: 'debian-12', size: 'small' },
  ],
  volumes: [{ name: 'va', instance: 'a', size: 20 }],
  buckets: [{ address: 'assets', bucketName: 'tt-assets', versioning: false }],
  next: 1,
};

/** Every address a world declares. */
export function addresses(w: World): string[] {
  return [
    ...w.networks.map((n) => `sb.networks/${n}`),
    ...w.instances.map((i) => `sb.instances/${i.name}`),
    ...w.volumes.map((v) => `sb.volumes/${v.name}`),
    ...w.buckets.map((b) => `sb.buckets/${b.address}`),
  ].sort();
}

/** The world as intent YAML, pointing at a sandbox. */
export function worldYaml(sandboxUrl: string, w: World, timeoutMs = 800): string {
  const docs = [
    `kind: Provider
name: sb
type: openapi
spec: ${sandboxUrl}/openapi.json
endpoint: ${sandboxUrl}
timeoutMs: ${timeoutMs}
`,
  ];
  for (const n of w.networks) {
    docs.push(`kind: Resource
type: sb.networks
name: ${n}
spec:
  name: net-${n}
  cidr: 10.${20 + Number(n.slice(1))}.0.0/16
`);
  }
  for (const i of w.instances) {
    docs.push(`kind: Resource
type: sb.instances
name: ${i.name}
spec:
  name: vm-${i.name}
  network_id: \${sb.networks/${i.network}.id}
  image: ${i.image}
  size: ${i.size}
`);
  }
  for (const v of w.volumes) {
    docs.push(`kind: Resource
type: sb.volumes
name: ${v.name}
spec:
  name: disk-${v.name}
  instance_id: \${sb.instances/${v.instance}.id}
  size: ${v.size}
lifecycle: { stateful: true }
`);
  }
  for (const b of w.buckets) {
    docs.push(`kind: Resource
type: sb.buckets
name: ${b.address}
spec:
  name: ${b.bucketName}
  versioning: ${b.versioning}
`);
  }
  return docs.join('---\n');
}

/** A seeded source of choices. */
export interface Dice {
  (): number;
}

function pick<T>(random: Dice, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/**
 * One random change of a world. Changes that do not apply (nothing to remove, nowhere to move) fall
 * through to another kind; `none` is returned only when nothing applies at all.
 */
export function change(w: World, random: Dice): Change {
  const kinds: ChangeKind[] = ['add', 'remove', 'rename', 'replace', 'update', 'move'];
  const first = Math.floor(random() * kinds.length);
  for (let k = 0; k < kinds.length; k++) {
    const c = tryChange(kinds[(first + k) % kinds.length]!, w, random);
    if (c) return c;
  }
  return { kind: 'none', label: 'no change', world: w, actions: [] };
}

function tryChange(kind: ChangeKind, w: World, random: Dice): Change | undefined {
  const fresh = `x${w.next}`;
  const next = w.next + 1;
  switch (kind) {
    case 'add': {
      const what = pick(random, ['instance', 'volume', 'bucket', 'network'] as const);
      if (what === 'instance') {
        const inst: InstanceSpec = {
          name: fresh,
          network: pick(random, w.networks),
          image: 'debian-12',
          size: 'small',
        };
        const withVolume = random() < 0.5;
        return {
          kind,
          label: `add instance ${fresh}${withVolume ? ' with a volume' : ''}`,
          world: {
            ...w,
            next,
            instances: [...w.instances, inst],
            volumes: withVolume
              ? [...w.volumes, { name: `v${fresh}`, instance: fresh, size: 10 }]
              : w.volumes,
          },
          actions: ['create'],
        };
      }
      if (what === 'volume' && w.instances.length > 0) {
        const on = pick(random, w.instances).name;
        return {
          kind,
          label: `add volume v${fresh} on ${on}`,
          world: {
            ...w,
            next,
            volumes: [...w.volumes, { name: `v${fresh}`, instance: on, size: 10 }],
          },
          actions: ['create'],
        };
      }
      if (what === 'network' && w.networks.length < 4) {
        const n = `n${[1, 2, 3, 4].find((i) => !w.networks.includes(`n${i}`))!}`;
        return {
          kind,
          label: `add network ${n}`,
          world: { ...w, next, networks: [...w.networks, n] },
          actions: ['create'],
        };
      }
      return {
        kind,
        label: `add bucket ${fresh}`,
        world: {
          ...w,
          next,
          buckets: [...w.buckets, { address: fresh, bucketName: `tt-${fresh}`, versioning: false }],
        },
        actions: ['create'],
      };
    }
    case 'remove': {
      const what = pick(random, ['instance', 'volume', 'bucket', 'network'] as const);
      if (what === 'instance' && w.instances.length > 0) {
        const gone = pick(random, w.instances);
        const others = w.instances.filter((i) => i.name !== gone.name);
        // Its volumes go with it, or move to another instance (a dependency move and a delete).
        const moveVolumes = others.length > 0 && random() < 0.5;
        const target = others.length > 0 ? pick(random, others).name : '';
        const volumes = moveVolumes
          ? w.volumes.map((v) => (v.instance === gone.name ? { ...v, instance: target } : v))
          : w.volumes.filter((v) => v.instance !== gone.name);
        return {
          kind,
          label: `remove instance ${gone.name}${moveVolumes ? ` (its volumes move to ${target})` : ' and its volumes'}`,
          world: { ...w, instances: others, volumes },
          actions: moveVolumes ? ['delete', 'update'] : ['delete'],
        };
      }
      if (what === 'volume' && w.volumes.length > 0) {
        const gone = pick(random, w.volumes);
        return {
          kind,
          label: `remove volume ${gone.name}`,
          world: { ...w, volumes: w.volumes.filter((v) => v.name !== gone.name) },
          actions: ['delete'],
        };
      }
      if (what === 'network') {
        const unused = w.networks.filter(
          (n) => w.networks.length > 1 && !w.instances.some((i) => i.network === n),
        );
        if (unused.length > 0) {
          const gone = pick(random, unused);
          return {
            kind,
            label: `remove network ${gone}`,
            world: { ...w, networks: w.networks.filter((n) => n !== gone) },
            actions: ['delete'],
          };
        }
      }
      if (w.buckets.length === 0) return undefined;
      const gone = pick(random, w.buckets);
      return {
        kind,
        label: `remove bucket ${gone.address}`,
        world: { ...w, buckets: w.buckets.filter((b) => b.address !== gone.address) },
        actions: ['delete'],
        droppedBucket: gone.bucketName,
      };
    }
    case 'rename': {
      // A new address with the same natural key: a move (the platform object must survive).
      if (w.buckets.length === 0) return undefined;
      const b = pick(random, w.buckets);
      return {
        kind,
        label: `rename bucket ${b.address} → ${fresh} (same name ${b.bucketName})`,
        world: {
          ...w,
          next,
          buckets: w.buckets.map((x) => (x.address === b.address ? { ...x, address: fresh } : x)),
        },
        actions: ['delete', 'create'],
        renamedBucket: b.bucketName,
        renamedFrom: `sb.buckets/${b.address}`,
      };
    }
    case 'replace': {
      const what = pick(random, ['instance', 'volume'] as const);
      if (what === 'volume' && w.volumes.length > 0) {
        // Shrinking a volume: only the platform's lifecycle endpoint knows it needs a replace.
        const v = pick(random, w.volumes);
        if (v.size > 5) {
          return {
            kind,
            label: `shrink volume ${v.name} (replace)`,
            world: {
              ...w,
              volumes: w.volumes.map((x) => (x.name === v.name ? { ...x, size: x.size - 5 } : x)),
            },
            actions: ['replace-create', 'replace-delete'],
          };
        }
      }
      if (w.instances.length === 0) return undefined;
      const i = pick(random, w.instances);
      const image = i.image === 'debian-12' ? 'debian-13' : 'debian-12';
      return {
        kind,
        label: `new image for instance ${i.name} (replace; its volumes repointed)`,
        world: {
          ...w,
          instances: w.instances.map((x) => (x.name === i.name ? { ...x, image } : x)),
        },
        actions: ['replace-create', 'replace-delete', 'update'],
      };
    }
    case 'update': {
      const what = pick(random, ['instance', 'volume', 'bucket'] as const);
      if (what === 'volume' && w.volumes.length > 0) {
        const v = pick(random, w.volumes);
        return {
          kind,
          label: `grow volume ${v.name}`,
          world: {
            ...w,
            volumes: w.volumes.map((x) => (x.name === v.name ? { ...x, size: x.size + 5 } : x)),
          },
          actions: ['update'],
        };
      }
      if (what === 'bucket' && w.buckets.length > 0) {
        const b = pick(random, w.buckets);
        return {
          kind,
          label: `toggle versioning of bucket ${b.address}`,
          world: {
            ...w,
            buckets: w.buckets.map((x) =>
              x.address === b.address ? { ...x, versioning: !x.versioning } : x,
            ),
          },
          actions: ['update'],
        };
      }
      if (w.instances.length === 0) return undefined;
      const i = pick(random, w.instances);
      const size = pick(
        random,
        (['small', 'medium', 'large'] as const).filter((s) => s !== i.size),
      );
      return {
        kind,
        label: `resize instance ${i.name} to ${size}`,
        world: {
          ...w,
          instances: w.instances.map((x) => (x.name === i.name ? { ...x, size } : x)),
        },
        actions: ['update'],
      };
    }
    case 'move': {
      // Re-point a resource to another one it depends on.
      const what = pick(random, ['volume', 'instance'] as const);
      if (what === 'volume' && w.volumes.length > 0 && w.instances.length > 1) {
        const v = pick(random, w.volumes);
        const to = pick(
          random,
          w.instances.filter((i) => i.name !== v.instance),
        ).name;
        return {
          kind,
          label: `move volume ${v.name} from ${v.instance} to ${to}`,
          world: {
            ...w,
            volumes: w.volumes.map((x) => (x.name === v.name ? { ...x, instance: to } : x)),
          },
          actions: ['update'],
        };
      }
      if (w.instances.length === 0 || w.networks.length < 2) return undefined;
      const i = pick(random, w.instances);
      const to = pick(
        random,
        w.networks.filter((n) => n !== i.network),
      );
      return {
        kind,
        label: `move instance ${i.name} from ${i.network} to ${to}`,
        world: {
          ...w,
          instances: w.instances.map((x) => (x.name === i.name ? { ...x, network: to } : x)),
        },
        actions: ['update'],
      };
    }
    case 'none':
      return undefined;
  }
}
