import type { Announcement } from '../../core/index.js';
import { formatDuration } from '../../core/index.js';

/** A value as one short piece of text: JSON, cut at 60 characters. */
function shortValue(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** `2026-11-24 16:00:00 UTC`. */
function utc(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** Who and why: `hpa (controller, intent availability, motivation traffic: spike, urgency high)`. */
function attribution(a: Announcement): string {
  const m = a.motivation;
  const why = m
    ? `motivation ${m.kind}${m.ref ? `: ${m.ref}` : ''}${m.urgency ? `, urgency ${m.urgency}` : ''}${
        m.expiresAt && m.expiresAt !== a.expiresAt ? `, until ${utc(m.expiresAt)}` : ''
      }`
    : undefined;
  const details = [a.actorKind, a.intent && `intent ${a.intent}`, why].filter(Boolean);
  return details.length > 0 ? `${a.actor} (${details.join(', ')})` : a.actor;
}

/**
 * One line saying what will be attributed to whom until when, e.g. `a change of sb.services/api
 * replicas to 5 will be attributed to hpa (controller, intent availability) until 2026-11-24
 * 16:00:00 UTC (in 2h)`.
 */
export function describeAnnouncement(a: Announcement, now: Date): string {
  const left = Date.parse(a.expiresAt) - now.getTime();
  const when =
    left > 0
      ? `will be attributed to ${attribution(a)} until ${utc(a.expiresAt)} (in ${roughly(left)})`
      : `was attributed to ${attribution(a)} until ${utc(a.expiresAt)} (expired ${roughly(-left)} ago)`;
  const note = a.note ? ` — ${a.note.replace(/\s*\n\s*/g, ' ')}` : '';
  return `a change of ${a.address} ${a.field} to ${shortValue(a.value)} ${when}${note}`;
}

/** A duration to the minute once it is a minute or more (`2h`, not `1h59m57s`). */
function roughly(ms: number): string {
  return formatDuration(ms >= 60_000 ? Math.round(ms / 60_000) * 60_000 : ms);
}
