import { isAlias, isMap, isPair, isScalar, isSeq } from 'yaml';
import type { Document, Node } from 'yaml';

/**
 * Bounds on what a YAML document may cost to read. A file of a few hundred bytes can make the `yaml`
 * package (or anything that walks its output) run for hours: aliases that expand exponentially
 * ("billion laughs"), many aliases (each alias scans every anchor and alias before it), or deep
 * nesting (recursive walkers overflow the stack). Every bound is checked on the syntax tree, before
 * the document is turned into data, in time linear in the tree.
 */
export interface YamlLimits {
  /** Deepest nesting of collections. */
  readonly maxDepth: number;
  /** Anchors plus aliases in one document. */
  readonly maxAliasNodes: number;
  /** Nodes the aliases add when the document is written out without them. */
  readonly maxAliasExpansion: number;
}

/** The limits Tend reads YAML with (intent files and OpenAPI documents alike). */
export const YAML_LIMITS: YamlLimits = {
  maxDepth: 256,
  maxAliasNodes: 10_000,
  maxAliasExpansion: 1_000_000,
};

/** What is wrong with a YAML document, and where. */
export interface YamlProblem {
  readonly kind:
    | 'duplicate-key'
    | 'too-deep'
    | 'too-many-aliases'
    | 'alias-expansion'
    | 'alias-loop'
    | 'alias-unknown';
  /** Says what is wrong, without the position. */
  readonly message: string;
  /** Offset of the offending node in the source text. */
  readonly offset: number;
}

interface Frame {
  readonly node: Node;
  readonly depth: number;
  readonly parent: Frame | undefined;
  /** Set once the node's children are on the stack: popping it again finishes it. */
  open: boolean;
  /** Nodes in this node's value written out in full, itself included (complete once finished). */
  size: number;
}

/**
 * Checks a parsed YAML document (one without syntax errors) against the limits, and finds duplicate
 * mapping keys (the `yaml` package's own check is quadratic in the size of a mapping: parse with
 * `uniqueKeys: false` and let this find them). Returns every duplicate key, or the first limit
 * exceeded; an empty list means the document may be turned into data with `maxAliasCount: -1` (the
 * package's own alias bound is itself quadratic: it is replaced by this one).
 */
export function checkYamlDocument(
  doc: Document.Parsed,
  limits: YamlLimits = YAML_LIMITS,
): YamlProblem[] {
  const root = doc.contents as Node | null;
  if (root === null) return [];
  const problems: YamlProblem[] = [];
  /** The node each anchor name stands for at this point of the document (the last one set). */
  const anchors = new Map<string, Node>();
  /** Nodes written out in full, per finished anchored node (what an alias to it adds). */
  const size = new Map<Node, number>();
  let aliasNodes = 0;
  let added = 0;
  const at = (node: Node): number => node.range?.[0] ?? 0;
  const finish = (frame: Frame): void => {
    if (frame.node.anchor !== undefined) size.set(frame.node, frame.size);
    if (frame.parent) frame.parent.size += frame.size;
  };
  const stack: Frame[] = [{ node: root, depth: 1, parent: undefined, open: false, size: 1 }];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const { node } = frame;
    if (frame.open) {
      stack.pop();
      finish(frame);
      continue;
    }
    frame.open = true;
    if (frame.depth > limits.maxDepth) {
      return [
        {
          kind: 'too-deep',
          message: `nested more than ${limits.maxDepth} levels deep`,
          offset: at(node),
        },
      ];
    }
    if (node.anchor !== undefined || isAlias(node)) {
      if (++aliasNodes > limits.maxAliasNodes) {
        return [
          {
            kind: 'too-many-aliases',
            message: `more than ${limits.maxAliasNodes} anchors and aliases`,
            offset: at(node),
          },
        ];
      }
    }
    if (node.anchor !== undefined) anchors.set(node.anchor, node);
    if (isAlias(node)) {
      stack.pop();
      const target = anchors.get(node.source);
      if (target === undefined) {
        return [
          {
            kind: 'alias-unknown',
            message: `alias *${node.source} has no anchor &${node.source} before it`,
            offset: at(node),
          },
        ];
      }
      const expanded = size.get(target);
      if (expanded === undefined) {
        return [
          {
            kind: 'alias-loop',
            message: `alias *${node.source} is inside the value it names (a recursive value)`,
            offset: at(node),
          },
        ];
      }
      added += expanded - 1;
      if (added > limits.maxAliasExpansion) {
        return [
          {
            kind: 'alias-expansion',
            message: `its aliases expand it by more than ${limits.maxAliasExpansion.toLocaleString('en-US')} values (an alias bomb?)`,
            offset: at(node),
          },
        ];
      }
      frame.size = expanded;
      finish(frame);
      continue;
    }
    const children: Node[] = [];
    if (isMap(node)) {
      const keys = new Set<unknown>();
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const key = pair.key as Node | null;
        if (isScalar(key)) {
          if (keys.has(key.value)) {
            problems.push({
              kind: 'duplicate-key',
              message: `Map keys must be unique: ${describeKey(key.value)} is already a key of this mapping`,
              offset: at(key),
            });
          }
          keys.add(key.value);
        }
        if (key !== null && typeof key === 'object') children.push(key);
        const value = pair.value as Node | null;
        if (value !== null && typeof value === 'object') children.push(value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) {
        if (item !== null && typeof item === 'object') children.push(item as Node);
      }
    }
    // Reversed, so that children are taken in document order (anchors before their aliases).
    for (let i = children.length - 1; i >= 0; i--) {
      stack.push({
        node: children[i]!,
        depth: frame.depth + 1,
        parent: frame,
        open: false,
        size: 1,
      });
    }
  }
  return problems;
}

function describeKey(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value);
  return `\`${text.length > 60 ? `${text.slice(0, 57)}...` : text}\``;
}
