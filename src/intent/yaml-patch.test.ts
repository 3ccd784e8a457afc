import { describe, expect, it } from 'vitest';
import { fieldPosition, parseFieldPath, patchResourceField } from './yaml-patch.js';
import type { PatchResult } from './yaml-patch.js';

const API = { type: 'sb.services', name: 'api' };
const HEAD = 'kind: Resource\ntype: sb.services\nname: api\n';

/** A Resource document for sb.services/api whose `spec:` lines are `spec` (indented by the case). */
function resource(spec: string, after = ''): string {
  return `${HEAD}spec:\n${spec}${after}`;
}

interface Case {
  readonly name: string;
  /** Why the expected outcome is right. */
  readonly reason: string;
  readonly text: string;
  readonly path: string;
  readonly value: unknown;
  /** The whole patched text, for `patched`. */
  readonly want?: string;
  readonly kind?: PatchResult['kind'];
  /** For `elsewhere` and `not-found`: the reason matches, and `where` is at this line. */
  readonly because?: RegExp;
  readonly line?: number;
}

const cases: Case[] = [
  // Scalars keep their style.
  {
    name: 'plain number with a comment after it',
    reason: 'only the number changes; the comment on the line survives',
    text: resource('  replicas: 2 # two is enough\n  image: nginx\n'),
    path: 'replicas',
    value: 5,
    want: resource('  replicas: 5 # two is enough\n  image: nginx\n'),
  },
  {
    name: 'spec. prefix',
    reason: 'a field path may start with spec.',
    text: resource('  replicas: 2\n'),
    path: 'spec.replicas',
    value: 3,
    want: resource('  replicas: 3\n'),
  },
  {
    name: 'plain string stays plain',
    reason: 'the new text reads back as the same string without quotes',
    text: resource('  image: nginx:1.27\n'),
    path: 'image',
    value: 'nginx:1.28',
    want: resource('  image: nginx:1.28\n'),
  },
  {
    name: 'plain string that would read as a boolean',
    reason: 'plain `true` is a boolean: quoted, single quotes being enough',
    text: resource('  name: api\n'),
    path: 'name',
    value: 'true',
    want: resource("  name: 'true'\n"),
  },
  {
    name: 'plain string with `: ` in it',
    reason: 'plain `a: b` is a mapping',
    text: resource('  name: api # the name\n'),
    path: 'name',
    value: 'a: b',
    want: resource("  name: 'a: b' # the name\n"),
  },
  {
    name: 'single-quoted stays single-quoted',
    reason: 'the style is kept even where plain would do; a quote inside is doubled',
    text: resource("  name: 'api'\n"),
    path: 'name',
    value: "it's",
    want: resource("  name: 'it''s'\n"),
  },
  {
    name: 'single-quoted with a line break',
    reason: 'a single-quoted scalar has no escapes: a line break needs double quotes',
    text: resource("  name: 'api'\n"),
    path: 'name',
    value: 'a\nb',
    want: resource('  name: "a\\nb"\n'),
  },
  {
    name: 'double-quoted stays double-quoted',
    reason: 'escapes as YAML double-quoted scalars need them',
    text: resource('  name: "api" # quoted\n'),
    path: 'name',
    value: 'say "hi"\tthere',
    want: resource('  name: "say \\"hi\\"\\tthere" # quoted\n'),
  },
  {
    name: 'quoted string becomes a number',
    reason: 'the type changes: the smallest correct rendering is a plain number',
    text: resource("  port: '8080'\n"),
    path: 'port',
    value: 9090,
    want: resource('  port: 9090\n'),
  },
  {
    name: 'number becomes a string',
    reason: 'plain when the string reads back as itself',
    text: resource('  size: 20\n'),
    path: 'size',
    value: 'large',
    want: resource('  size: large\n'),
  },
  {
    name: 'number becomes a numeric string',
    reason: 'plain `20` would read as a number',
    text: resource('  size: 10\n'),
    path: 'size',
    value: '20',
    want: resource("  size: '20'\n"),
  },
  {
    name: 'boolean',
    reason: 'booleans are plain',
    text: resource('  versioning: false # off for now\n'),
    path: 'versioning',
    value: true,
    want: resource('  versioning: true # off for now\n'),
  },
  {
    name: 'block literal',
    reason: 'the header and the content indentation are kept',
    text: resource('  script: |\n    echo hi\n    exit 0\n  size: 1\n'),
    path: 'script',
    value: 'echo bye\nexit 1\n',
    want: resource('  script: |\n    echo bye\n    exit 1\n  size: 1\n'),
  },
  {
    name: 'block literal, value without a final line break',
    reason: 'the chomping indicator follows the value: strip (-)',
    text: resource('  script: |\n    echo hi\n  size: 1\n'),
    path: 'script',
    value: 'echo bye',
    want: resource('  script: |-\n    echo bye\n  size: 1\n'),
  },
  {
    name: 'folded scalar of one line',
    reason: 'one line folds to itself: the style is kept',
    text: resource('  note: >\n    hello there\n'),
    path: 'note',
    value: 'bye now\n',
    want: resource('  note: >\n    bye now\n'),
  },
  {
    name: 'block literal replaced by a number',
    reason: 'the number goes on the key line; the next key keeps its line',
    text: resource('  script: |\n    echo hi\n  size: 1\n'),
    path: 'script',
    value: 3,
    want: resource('  script: 3\n  size: 1\n'),
  },
  {
    name: 'empty value',
    reason: '`key:` with nothing after it gets the value on the key line',
    text: resource('  replicas:\n  image: nginx\n'),
    path: 'replicas',
    value: 3,
    want: resource('  replicas: 3\n  image: nginx\n'),
  },
  {
    name: 'empty value with a comment',
    reason: 'the value goes before the comment',
    text: resource('  replicas: # later\n  image: nginx\n'),
    path: 'replicas',
    value: 3,
    want: resource('  replicas: 3 # later\n  image: nginx\n'),
  },

  // Collections.
  {
    name: 'flow sequence of the same length',
    reason: 'item by item: only the changed item is rewritten',
    text: resource('  ns: [a.example., b.example.]\n'),
    path: 'ns',
    value: ['a.example.', 'c.example.'],
    want: resource('  ns: [a.example., c.example.]\n'),
  },
  {
    name: 'flow sequence that grows, padded',
    reason: 'rewritten in flow style with the same padding',
    text: resource('  ns: [ a, b ] # servers\n'),
    path: 'ns',
    value: ['a', 'b', 'c'],
    want: resource('  ns: [ a, b, c ] # servers\n'),
  },
  {
    name: 'flow sequence items that need quotes',
    reason: 'a comma cannot be plain inside a flow collection',
    text: resource('  ns: [a]\n'),
    path: 'ns',
    value: ['a,b', 'c'],
    want: resource("  ns: ['a,b', c]\n"),
  },
  {
    name: 'block sequence that grows',
    reason: 'rewritten in block style at the same indentation',
    text: resource('  ns:\n    - a\n    - b\n  size: 1\n'),
    path: 'ns',
    value: ['a', 'b', 'c'],
    want: resource('  ns:\n    - a\n    - b\n    - c\n  size: 1\n'),
  },
  {
    name: 'block sequence not indented under its key',
    reason: 'the sequence keeps its column',
    text: resource('  ns:\n  - a\n  - b\n  size: 1\n'),
    path: 'ns',
    value: ['x'],
    want: resource('  ns:\n  - x\n  size: 1\n'),
  },
  {
    name: 'block sequence becomes a scalar',
    reason: 'the scalar moves up behind the key',
    text: resource('  ns:\n    - a\n  size: 1\n'),
    path: 'ns',
    value: 'none',
    want: resource('  ns: none\n  size: 1\n'),
  },
  {
    name: 'flow mapping gains a key',
    reason: 'the key is added last, inside the braces',
    text: resource('  tags: { team: platform }\n'),
    path: 'tags',
    value: { team: 'platform', hotfix: 'INC-42' },
    want: resource('  tags: { team: platform, hotfix: INC-42 }\n'),
  },
  {
    name: 'flow mapping, nested path',
    reason: 'tags.team is the one scalar inside the flow mapping',
    text: resource('  tags: {team: platform, env: prod}\n'),
    path: 'tags.team',
    value: 'core',
    want: resource('  tags: {team: core, env: prod}\n'),
  },
  {
    name: 'flow mapping, missing nested key',
    reason: 'added inside the braces',
    text: resource('  tags: {team: platform}\n'),
    path: 'tags.env',
    value: 'prod',
    want: resource('  tags: {team: platform, env: prod}\n'),
  },
  {
    name: 'empty flow mapping gains a key',
    reason: 'rewritten with the default padding',
    text: resource('  tags: {}\n'),
    path: 'tags.team',
    value: 'core',
    want: resource('  tags: { team: core }\n'),
  },
  {
    name: 'block mapping, nested path with a comment',
    reason: 'only the scalar changes',
    text: resource('  tags:\n    team: platform # owners\n    env: prod\n'),
    path: 'tags.team',
    value: 'core',
    want: resource('  tags:\n    team: core # owners\n    env: prod\n'),
  },
  {
    name: 'block mapping gains a key',
    reason: 'added as the last entry at the mapping’s indentation',
    text: resource('  tags:\n    team: platform # owners\n  size: 1\n'),
    path: 'tags',
    value: { team: 'platform', hotfix: 'INC-42' },
    want: resource('  tags:\n    team: platform # owners\n    hotfix: INC-42\n  size: 1\n'),
  },
  {
    name: 'block mapping loses a key',
    reason: 'the entry’s line goes; the comment before it stays',
    text: resource(
      '  tags:\n    team: platform\n    # the incident\n    hotfix: INC-42\n  size: 1\n',
    ),
    path: 'tags',
    value: { team: 'platform' },
    want: resource('  tags:\n    team: platform\n    # the incident\n  size: 1\n'),
  },
  {
    name: 'scalar becomes a mapping',
    reason: 'written in flow style on the same line, keeping the comment',
    text: resource('  limits: none # for now\n'),
    path: 'limits',
    value: { cpu: 2 },
    want: resource('  limits: { cpu: 2 } # for now\n'),
  },
  {
    name: 'sequence item by index',
    reason: 'a path may index a list',
    text: resource('  ports:\n    - 80\n    - 443\n'),
    path: 'ports[1]',
    value: 8443,
    want: resource('  ports:\n    - 80\n    - 8443\n'),
  },

  // Missing fields.
  {
    name: 'missing field',
    reason: 'added as the last entry of spec, after its last value',
    text: resource('  name: api\n  image: nginx # pinned\n', '# the end\n'),
    path: 'replicas',
    value: 2,
    want: resource('  name: api\n  image: nginx # pinned\n  replicas: 2\n', '# the end\n'),
  },
  {
    name: 'missing nested field',
    reason: 'the missing mapping is added in block style',
    text: resource('  name: api\n'),
    path: 'tags.team',
    value: 'core',
    want: resource('  name: api\n  tags:\n    team: core\n'),
  },
  {
    name: 'missing field after a block collection',
    reason: 'added after the collection’s last line',
    text: resource('  tags:\n    team: core\n', 'checks: []\n'),
    path: 'replicas',
    value: 2,
    want: resource('  tags:\n    team: core\n  replicas: 2\n', 'checks: []\n'),
  },
  {
    name: 'missing spec',
    reason: 'spec itself is added to the document',
    text: HEAD,
    path: 'replicas',
    value: 2,
    want: `${HEAD}spec:\n  replicas: 2\n`,
  },
  {
    name: 'missing field at the end of a file without a final line break',
    reason: 'a line break is added first',
    text: resource('  name: api'),
    path: 'replicas',
    value: 2,
    want: resource('  name: api\n  replicas: 2\n'),
  },
  {
    name: 'missing field, four-space indentation',
    reason: 'the new mapping is indented like the file',
    text: `${HEAD}spec:\n    name: api\n`,
    path: 'tags.team',
    value: 'core',
    want: `${HEAD}spec:\n    name: api\n    tags:\n        team: core\n`,
  },

  // Several documents, line endings.
  {
    name: 'several documents',
    reason: 'only the document of the type and name changes',
    text: [
      'kind: Provider\nname: sb\n',
      'kind: Resource\ntype: sb.services\nname: web\nspec:\n  replicas: 2\n',
      '# the api\nkind: Resource\ntype: sb.services\nname: api\nspec:\n  replicas: 2\n',
      'kind: Resource\ntype: sb.volumes\nname: api\nspec:\n  replicas: 2\n',
    ].join('---\n'),
    path: 'replicas',
    value: 4,
    want: [
      'kind: Provider\nname: sb\n',
      'kind: Resource\ntype: sb.services\nname: web\nspec:\n  replicas: 2\n',
      '# the api\nkind: Resource\ntype: sb.services\nname: api\nspec:\n  replicas: 4\n',
      'kind: Resource\ntype: sb.volumes\nname: api\nspec:\n  replicas: 2\n',
    ].join('---\n'),
  },
  {
    name: 'CRLF line endings, scalar',
    reason: 'the line ending is untouched',
    text: resource('  replicas: 2 # two\n  name: api\n').replaceAll('\n', '\r\n'),
    path: 'replicas',
    value: 5,
    want: resource('  replicas: 5 # two\n  name: api\n').replaceAll('\n', '\r\n'),
  },
  {
    name: 'CRLF line endings, new entry',
    reason: 'new lines use the file’s line ending',
    text: resource('  tags:\n    team: core\n  name: api\n').replaceAll('\n', '\r\n'),
    path: 'tags.env',
    value: 'prod',
    want: resource('  tags:\n    team: core\n    env: prod\n  name: api\n').replaceAll(
      '\n',
      '\r\n',
    ),
  },
  {
    name: 'CRLF line endings, block sequence rewritten',
    reason: 'every new line ends in CRLF',
    text: resource('  ns:\n    - a\n  name: api\n').replaceAll('\n', '\r\n'),
    path: 'ns',
    value: ['a', 'b'],
    want: resource('  ns:\n    - a\n    - b\n  name: api\n').replaceAll('\n', '\r\n'),
  },

  // Anchors and aliases.
  {
    name: 'anchor nobody uses',
    reason: 'the anchor stays on the patched value',
    text: resource('  replicas: &n 2\n'),
    path: 'replicas',
    value: 3,
    want: resource('  replicas: &n 3\n'),
  },
  {
    name: 'alias',
    reason: 'the value is the anchor’s: the change belongs there',
    text: resource('  min: &n 2\n  replicas: *n\n'),
    path: 'replicas',
    value: 3,
    kind: 'elsewhere',
    because: /alias \*n/,
    line: 5,
  },
  {
    name: 'anchor used by an alias',
    reason: 'patching it would change the alias too',
    text: resource('  min: &n 2\n  replicas: *n\n'),
    path: 'min',
    value: 3,
    kind: 'elsewhere',
    because: /anchor &n, which is also used at line 6/,
    line: 5,
  },
  {
    name: 'inside an aliased mapping',
    reason: 'a new key in a shared mapping would appear in every alias',
    text: resource('  tags: &t\n    team: core\n  labels: *t\n'),
    path: 'tags.env',
    value: 'prod',
    kind: 'elsewhere',
    because: /inside the anchor &t/,
    line: 5,
  },
  {
    name: 'through an alias',
    reason: 'a path through an alias leads to the anchor',
    text: resource('  tags: &t\n    team: core\n  labels: *t\n'),
    path: 'labels.team',
    value: 'ops',
    kind: 'elsewhere',
    because: /alias \*t/,
    line: 5,
  },
  {
    name: 'merge key',
    reason: 'a key brought in by `<<` lives at its source',
    text: resource('  base: &b\n    owner: ops\n  tags:\n    <<: *b\n    team: core\n'),
    path: 'tags.owner',
    value: 'dev',
    kind: 'elsewhere',
    because: /comes from a merge key/,
    line: 6,
  },
  {
    name: 'explicit key beside a merge key',
    reason: 'an explicit key overrides the merged one and is patched in place',
    text: resource('  base: &b\n    owner: ops\n  tags:\n    <<: *b\n    team: core\n'),
    path: 'tags.team',
    value: 'web',
    want: resource('  base: &b\n    owner: ops\n  tags:\n    <<: *b\n    team: web\n'),
  },

  // References and secrets.
  {
    name: 'reference',
    reason: 'the value is another resource’s field',
    text: resource('  network_id: ${sb.networks/main.id}\n'),
    path: 'network_id',
    value: 'net-2',
    kind: 'elsewhere',
    because:
      /reference \$\{sb\.networks\/main\.id\}: its value is the field id of sb\.networks\/main/,
    line: 5,
  },
  {
    name: 'template',
    reason: 'a string built from a reference',
    text: resource('  url: "http://${sb.instances/web.id}:80/"\n'),
    path: 'url',
    value: 'http://other/',
    kind: 'elsewhere',
    because: /template/,
    line: 5,
  },
  {
    name: 'secret from the environment',
    reason: 'the secret lives in the environment, never in the intent',
    text: resource('  password: { fromEnv: DB_PASSWORD }\n'),
    path: 'password',
    value: 'hunter2',
    kind: 'elsewhere',
    because: /environment variable DB_PASSWORD/,
    line: 5,
  },
  {
    name: 'secret from a file',
    reason: 'the secret lives in its file',
    text: resource('  password:\n    fromFile: ./secrets/db\n'),
    path: 'password',
    value: 'hunter2',
    kind: 'elsewhere',
    because: /the file \.\/secrets\/db/,
    line: 6,
  },

  // Nothing to do, nothing to find.
  {
    name: 'same value',
    reason: 'nothing to change',
    text: resource('  tags: { team: core }\n'),
    path: 'tags',
    value: { team: 'core' },
    kind: 'unchanged',
  },
  {
    name: 'no such document',
    reason: 'the type and name must match',
    text: resource('  replicas: 2\n'),
    path: 'replicas',
    value: 2,
    kind: 'not-found',
    because: /no Resource document of type sb\.services named web/,
  },
  {
    name: 'path through a scalar',
    reason: 'a scalar has no fields',
    text: resource('  tags: none\n'),
    path: 'tags.team',
    value: 'core',
    kind: 'not-found',
    because: /spec\.tags is the value "none"/,
  },
];

describe('patchResourceField', () => {
  it.each(cases)('$name: $reason', (c) => {
    const locate = c.name === 'no such document' ? { ...API, name: 'web' } : API;
    const got = patchResourceField(c.text, 'app.yaml', locate, c.path, c.value);
    if (c.want !== undefined) {
      expect(got).toMatchObject({ kind: 'patched' });
      expect(got.kind === 'patched' && got.text).toBe(c.want);
      // Patching again with the same value changes nothing.
      const again = patchResourceField(c.want, 'app.yaml', locate, c.path, c.value);
      expect(again).toEqual({ kind: 'unchanged' });
      return;
    }
    expect(got.kind).toBe(c.kind);
    if (c.because) expect('reason' in got && got.reason).toMatch(c.because);
    if (c.line !== undefined) {
      expect(got.kind === 'elsewhere' && got.where).toMatchObject({
        file: 'app.yaml',
        line: c.line,
      });
    }
  });

  it('reports the first changed line', () => {
    const got = patchResourceField(
      resource('  name: api\n  replicas: 2\n'),
      'app.yaml',
      API,
      'replicas',
      7,
    );
    expect(got).toMatchObject({ kind: 'patched', line: 6 });
  });

  it('names the referenced resource and field', () => {
    const got = patchResourceField(
      resource('  network_id: ${sb.networks/main.id}\n'),
      'app.yaml',
      API,
      'network_id',
      'x',
    );
    expect(got).toMatchObject({
      kind: 'elsewhere',
      reference: { address: 'sb.networks/main', path: 'id' },
      where: { file: 'app.yaml', line: 5, column: 15 },
    });
  });

  it('keeps every byte outside the edited range', () => {
    const text = resource(
      "  # first\n  name:    'api'   # odd spacing\n  replicas:   2    # two\n\n\n  image: x\n",
      '# trailing\n...\n',
    );
    const got = patchResourceField(text, 'app.yaml', API, 'replicas', 3);
    expect(got.kind === 'patched' && got.text).toBe(text.replace('2    # two', '3    # two'));
  });

  it('refuses paths that are not paths', () => {
    for (const p of ['', 'spec', 'a..b', '__proto__', 'tags.constructor']) {
      expect(patchResourceField(resource('  a: 1\n'), 'f', API, p, 1).kind).toBe('not-found');
    }
  });
});

describe('parseFieldPath', () => {
  it.each([
    ['replicas', ['replicas']],
    ['spec.tags.team', ['tags', 'team']],
    ['ports[0].number', ['ports', '0', 'number']],
    ['ports.0', ['ports', '0']],
    ['a[1][2]', ['a', '1', '2']],
    ['a.', undefined],
    ['a[x]', undefined],
  ])('%s', (path, want) => {
    expect(parseFieldPath(path)).toEqual(want);
  });
});

describe('fieldPosition', () => {
  it('points at the value, or at the deepest part of the path that exists', () => {
    const text = resource('  name: main\n  tags:\n    team: core\n');
    expect(fieldPosition(text, 'f.yaml', API, 'name')).toEqual({
      file: 'f.yaml',
      line: 5,
      column: 9,
    });
    expect(fieldPosition(text, 'f.yaml', API, 'tags.team')).toMatchObject({ line: 7, column: 11 });
    expect(fieldPosition(text, 'f.yaml', API, 'id')).toMatchObject({ line: 5, column: 3 });
    expect(fieldPosition(text, 'f.yaml', { ...API, name: 'x' }, 'id')).toBeUndefined();
  });
});
