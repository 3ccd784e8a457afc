import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

/**
 * A validator of the official SARIF 2.1.0 JSON schema (rtm.5, the text OASIS approved as 2.1.0), as
 * the devDependency @microsoft/jest-sarif ships it. The file is written in draft-04, and the only
 * keyword of draft-04 it uses that draft-07 spells differently is its top-level `id` (`$id`), so it
 * is loaded as draft-07 into the project's ajv; one of its patterns is not a valid `u`-flag regular
 * expression (`…]?$`), hence `unicodeRegExp: false`.
 */
export function sarifValidator() {
  const require = createRequire(import.meta.url);
  const path = require.resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json');
  const {
    $schema: _,
    id,
    ...schema
  } = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false });
  addFormats.default(ajv);
  return ajv.compile({
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: id as string,
    ...schema,
  });
}
