/**
 * Addresses name one managed resource: `<provider>.<resourceType>/<name>`, e.g. `sb.volumes/data`.
 * The type part is `<provider name>.<resource type>`; the name is unique within its type.
 */
export type Address = `${string}/${string}`;

const NAME_SOURCE = '[a-z0-9]([a-z0-9_-]*[a-z0-9])?';
const TYPE_SOURCE = '([a-z0-9][a-z0-9_-]*)\\.([A-Za-z0-9][A-Za-z0-9_-]*)';
const NAME = new RegExp(`^${NAME_SOURCE}$`);
const TYPE = new RegExp(`^${TYPE_SOURCE}$`);

/**
 * The grammar of an address as the source of one regular expression, for the schemas of the HTTP API
 * and the MCP tools (JSON Schema `pattern`, zod `regex`): exactly what `parseAddress` accepts. A name
 * holds no `/`.
 */
export const ADDRESS_PATTERN = `^${TYPE_SOURCE}/${NAME_SOURCE}$`;

/** What is wrong with a text that does not match `ADDRESS_PATTERN`, as every adapter says it. */
export const NOT_AN_ADDRESS =
  'is not an address: write provider.type/name (lower-case letters, digits, - and _; a name holds no /), e.g. sb.services/api';

/** The parts of an address. */
export interface AddressParts {
  readonly type: string;
  readonly provider: string;
  readonly resourceType: string;
  readonly name: string;
}

/** Builds an address from its type (`provider.resourceType`) and name. */
export function address(type: string, name: string): Address {
  return `${type}/${name}`;
}

/** Splits an address; returns undefined when it is not of the form `provider.type/name`. */
export function parseAddress(text: string): AddressParts | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const type = text.slice(0, slash);
  const name = text.slice(slash + 1);
  const m = TYPE.exec(type);
  if (!m || !NAME.test(name)) return undefined;
  return { type, provider: m[1]!, resourceType: m[2]!, name };
}

/** Splits a resource type `provider.resourceType`; undefined when malformed. */
export function parseType(type: string): { provider: string; resourceType: string } | undefined {
  const m = TYPE.exec(type);
  return m ? { provider: m[1]!, resourceType: m[2]! } : undefined;
}

/** True when `name` is a valid resource name (lower-case letters, digits, `-` and `_`). */
export function isValidName(name: string): boolean {
  return NAME.test(name);
}
