import type { AnnounceOptions } from '../commands/announce.js';
import { statSync } from 'node:fs';
import { announce, AnnouncementError, listAnnouncements } from '../../app/index.js';
import type { Address } from '../../core/index.js';
import { parseAddress } from '../../core/index.js';
import type { Output } from '../common.js';
import { cliContext, fail, output, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';
import { describeAnnouncement } from '../render/announcement.js';

/** The flags that give an announcement, by the key each fills. */
const FLAGS = {
  field: '--field',
  value: '--value',
  actor: '--actor',
  actorKind: '--actor-kind',
  intent: '--intent',
  motivation: '--motivation',
  ref: '--ref',
  urgency: '--urgency',
  ttl: '--ttl',
  expiresAt: '--expires-at',
  note: '--note',
} as const;
type FlagKey = keyof typeof FLAGS;
const FLAG_KEYS = Object.keys(FLAGS) as FlagKey[];

/** How a key path is named when the announcement came from flags: its flag. */
function flagLabel(path: string): string {
  if (path === 'address') return '<address>';
  const top = path.split('.')[0] as FlagKey;
  return FLAGS[top] ?? path;
}

/** `--value 5` is the number 5, `--value true` a boolean, `--value '"5"'` the text 5; else text. */
export function parseValueFlag(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** True for an argument that is a directory rather than an address (the address was left out). */
function looksLikeDirectory(arg: string): boolean {
  if (parseAddress(arg)) return false;
  try {
    return statSync(arg).isDirectory();
  } catch {
    return false;
  }
}

/** Bad input: every problem on stderr (or in the JSON document), exit 2, nothing stored. */
function invalid(out: Output, errors: readonly string[]): void {
  if (out.json) out.data({ ok: false, errors });
  else {
    for (const e of errors) out.err(out.style.red(`error: ${e}`));
    const n = errors.length;
    out.err(`${n} problem${n === 1 ? '' : 's'}; nothing was announced.`);
  }
  process.exitCode = EXIT.invalidInput;
}

/** `tend announce`, run: checks the flags (exit 2 and nothing stored when they are wrong), then announces or lists. */
export async function announceHandler(
  address: string | undefined,
  dir: string | undefined,
  o: AnnounceOptions,
): Promise<void> {
  const out = output(o.json);
  const given = FLAG_KEYS.filter((k) => o[k] !== undefined);
  const mode = o.list ? 'list' : o.file !== undefined ? 'file' : 'flags';
  const usage: string[] = [];
  if (o.list && o.file !== undefined) usage.push('--list and -f: give one of them');
  if (o.all && !o.list) usage.push('--all: only with --list');
  if (mode !== 'flags') {
    for (const k of given) {
      usage.push(
        `${FLAGS[k]}: not with ${mode === 'list' ? '--list' : '-f'}${mode === 'file' ? ' (the file gives every key)' : ''}`,
      );
    }
    if (dir !== undefined) {
      usage.push(
        `${address}: with ${mode === 'list' ? '--list' : '-f'} the only argument is the intent directory`,
      );
    }
  } else if (address !== undefined && dir === undefined && looksLikeDirectory(address)) {
    usage.push(
      `<address>: missing (${address} is the intent directory); write the resource first, e.g. tend announce sb.services/api --field replicas --value 5 --actor hpa ${address}`,
    );
  } else if (address === undefined) {
    usage.push(
      '<address>: missing; write the resource as provider.type/name, e.g. tend announce sb.services/api --field replicas --value 5 --actor hpa (or use -f <file>, or --list)',
    );
  }
  if (usage.length > 0) {
    invalid(out, usage);
    return;
  }
  const directory = (mode === 'flags' ? dir : address) ?? '.';
  const selection = workspaceOptions(directory, o);
  try {
    if (mode === 'list') {
      const r = await listAnnouncements(cliContext(), { ...selection, all: Boolean(o.all) });
      if (out.json) out.data(r);
      else {
        const now = new Date(r.at);
        if (r.announcements.length === 0) {
          out.line(
            o.all ? 'no announcements' : 'no active announcements (--all shows expired ones too)',
          );
        }
        for (const a of r.announcements) {
          out.line(`${out.style.dim(a.id)}  ${describeAnnouncement(a, now)}`);
        }
      }
      process.exitCode = EXIT.ok;
      return;
    }
    const input =
      mode === 'flags'
        ? {
            address: address as Address,
            ...Object.fromEntries(
              given.map((k) => [k, k === 'value' ? parseValueFlag(o.value!) : o[k]]),
            ),
          }
        : undefined;
    const r = await announce(cliContext(), {
      ...selection,
      ...(input !== undefined ? { input, label: flagLabel } : { file: o.file! }),
    });
    if (out.json) out.data({ ok: true, ...r });
    else {
      for (const w of r.warnings) out.err(out.style.yellow(`warning: ${w}`));
      const now = cliContext().clock.now();
      for (const a of r.announcements) {
        out.line(`announced ${a.id}: ${describeAnnouncement(a, now)}`);
      }
    }
    process.exitCode = EXIT.ok;
  } catch (e) {
    if (e instanceof AnnouncementError) invalid(out, e.errors);
    else fail(out, e);
  }
}
