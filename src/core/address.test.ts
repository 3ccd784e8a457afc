import { describe, expect, it } from 'vitest';
import { ADDRESS_PATTERN, parseAddress } from './address.js';

describe('ADDRESS_PATTERN', () => {
  // The HTTP API and the MCP tools validate addresses with this pattern: it must accept exactly
  // what parseAddress accepts (they used to disagree on a `/` in a name).
  it.each([
    { text: 'sb.services/api', reason: 'an address' },
    { text: 'pdns.rrsets/www-a_1', reason: 'a name with - and _' },
    { text: 'pg.Tables/t', reason: 'a resource type with an upper-case letter' },
    { text: 'sb.services/a/b', reason: 'a name holds no /' },
    { text: 'sb.services/API', reason: 'a name is lower-case' },
    { text: 'services/api', reason: 'the type names its provider' },
    { text: 'sb.services/', reason: 'no name' },
    { text: 'sb.services/-api', reason: 'a name starts with a letter or digit' },
    { text: ' sb.services/api', reason: 'no white space' },
  ])('$text: $reason', ({ text }) => {
    expect(new RegExp(ADDRESS_PATTERN).test(text)).toBe(parseAddress(text) !== undefined);
  });
});
