import type { LiveFindings } from '../../app/index.js';
import type { Style } from './style.js';

/**
 * What is live beside the plan: orphans (objects carrying this workspace's marker that nothing
 * declares — never deleted by apply; `tend prune` deletes them), duplicates, replaces in progress.
 * Empty when there is nothing to say.
 */
export function renderLiveFindings(f: Partial<LiveFindings>, s: Style): string {
  const lines: string[] = [];
  const orphans = f.orphans ?? [];
  if (orphans.length > 0) {
    lines.push(
      s.yellow(
        `${orphans.length} orphan${orphans.length === 1 ? '' : 's'} (carry this workspace's marker, declared by nothing; never deleted by apply — see tend prune):`,
      ),
    );
    for (const o of orphans)
      lines.push(`  ? ${o.type} ${o.id}${o.address ? `  (was ${o.address})` : ''}`);
  }
  for (const r of f.replacing ?? []) {
    lines.push(
      s.yellow(
        `replace in progress for ${r.address}: old object ${r.oldObjectId} is deleted by the next apply or run pass`,
      ),
    );
  }
  for (const d of f.duplicates ?? [])
    lines.push(
      s.red(
        `duplicate objects for ${d.address}: ${d.objectIds.join(', ')} (kept; resolve by hand)`,
      ),
    );
  return lines.join('\n');
}
