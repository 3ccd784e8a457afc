import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/**
 * Every `target → key → value` an overlay file sets, later actions winning as when applied. An
 * update that sets properties by name (`target: …properties`, `update: {serial: {…}}`) is read as one
 * target per property, so hand-written and probed overlays compare target by target.
 */
export function overlayUpdates(file: string): Map<string, Record<string, unknown>> {
  const overlay = parse(readFileSync(file, 'utf8')) as {
    actions: { target: string; update?: Record<string, unknown> }[];
  };
  const out = new Map<string, Record<string, unknown>>();
  const at = (target: string) => {
    const known = out.get(target);
    if (known !== undefined) return known;
    const fresh: Record<string, unknown> = {};
    out.set(target, fresh);
    return fresh;
  };
  for (const a of overlay.actions) {
    for (const [k, v] of Object.entries(a.update ?? {})) {
      const annotation =
        k.startsWith('x-tend-') || ['writeOnly', 'default', 'readOnly'].includes(k);
      if (annotation) at(a.target)[k] = v;
      else if (typeof v === 'object' && v !== null) Object.assign(at(`${a.target}.${k}`), v);
    }
  }
  return out;
}

/** The arguments of `tend providers probe <spec> --overlay <overlay> --endpoint <url> --yes …more`. */
export function probeArgs(spec: string, overlay: string, endpoint: string, ...more: string[]) {
  return [
    'providers',
    'probe',
    spec,
    '--overlay',
    overlay,
    '--endpoint',
    endpoint,
    '--yes',
    ...more,
  ];
}
