// The `tls` check: a TLS handshake with a server, judged on its certificate (chain, name, days left).
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { checkServerIdentity, connect } from 'node:tls';
import type { PeerCertificate } from 'node:tls';
import type { CheckResult, TlsCheckDecl } from '../core/index.js';
import type { CheckContext } from './check-context.js';

const DAY_MS = 86_400_000;

/** What a handshake gave: the certificate and node's verdict on it, or why there was none. */
type Handshake =
  | {
      readonly ok: true;
      readonly cert: PeerCertificate;
      /** node's verification error code (chain first, then the name), absent when it verified. */
      readonly error?: string;
      /** The message of the name check, when that is what failed. */
      readonly nameError?: string;
    }
  | {
      readonly ok: false;
      readonly kind: 'timeout' | 'aborted' | 'network';
      readonly message: string;
    };

/** Messages for node's (OpenSSL's) verification codes; others are shown as the code. */
const VERIFY_ERRORS: Readonly<Record<string, string>> = {
  CERT_HAS_EXPIRED: 'certificate has expired',
  CERT_NOT_YET_VALID: 'certificate is not yet valid',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in the chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unable to verify the first certificate',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'unable to get the local issuer certificate',
  UNABLE_TO_GET_ISSUER_CERT: 'unable to get the issuer certificate',
  CERT_SIGNATURE_FAILURE: 'certificate signature failure',
  CERT_REVOKED: 'certificate revoked',
};

/** Codes that mean the chain does not lead to a trusted CA: `ca:` is the remedy. */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
]);

function networkMessage(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset during the handshake';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found (${e.code})`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `host unreachable (${e.code})`;
    default:
      return e.message;
  }
}

/**
 * Shakes hands with host:port and hangs up; nothing is sent. The handshake is let through whatever the
 * certificate (node still verifies it, against `ca` or its roots, and the name): the verdict is taken
 * from node's result afterwards, so that a failure can still show the certificate it is about
 * (docs/decisions/0055-tls-check.md).
 */
function handshake(
  host: string,
  port: number,
  name: string,
  ca: string | undefined,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<Handshake> {
  return new Promise((resolve) => {
    let nameError: string | undefined;
    const socket = connect({
      host,
      port,
      // SNI carries names only: an IP address is not sent (node warns about it), but still checked.
      ...(isIP(name) === 0 && { servername: name }),
      ...(ca !== undefined && { ca }),
      rejectUnauthorized: false,
      checkServerIdentity: (_host, cert) => {
        const e = checkServerIdentity(name, cert);
        nameError = e?.message;
        return e;
      },
    });
    let done = false;
    const finish = (result: Handshake) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () => finish({ ok: false, kind: 'timeout', message: `timed out after ${timeoutMs} ms` }),
      timeoutMs,
    );
    const onAbort = () => finish({ ok: false, kind: 'aborted', message: 'check aborted' });
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('secureConnect', () => {
      // A code such as CERT_HAS_EXPIRED at run time, though typed as an Error.
      const raw = socket.authorizationError as unknown;
      const error = socket.authorized
        ? undefined
        : typeof raw === 'string'
          ? raw
          : ((raw as { code?: string } | undefined)?.code ?? String(raw));
      finish({
        ok: true,
        cert: socket.getPeerCertificate(),
        ...(error !== undefined && { error }),
        ...(error === 'ERR_TLS_CERT_ALTNAME_INVALID' && nameError !== undefined && { nameError }),
      });
    });
    // Kept for the socket's life: an error after the verdict must not go unhandled.
    socket.on('error', (e: NodeJS.ErrnoException) =>
      finish({ ok: false, kind: 'network', message: networkMessage(e) }),
    );
  });
}

function field(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join('+') : value;
}

/** Who a certificate names: `CN=…` (or the organisation when there is no CN). */
function dn(part: PeerCertificate['subject'] | undefined): string {
  if (part === undefined) return '(none)';
  const cn = field(part.CN);
  if (cn !== undefined) return `CN=${cn}`;
  const o = field(part.O);
  return o === undefined ? '(no CN)' : `O=${o}`;
}

/** Whole days (rounded down): `1 day`, `9 days`. */
function days(ms: number): string {
  const n = Math.floor(ms / DAY_MS);
  return `${n} day${n === 1 ? '' : 's'}`;
}

function daysText(msLeft: number): string {
  return msLeft < 0 ? `expired ${days(-msLeft)} ago` : `${days(msLeft)} left`;
}

/**
 * Runs a TLS check: connects to host:port (SNI `servername`, else host), and passes when the chain
 * verifies against `ca` (else Node's roots), the certificate matches the name and has more
 * than `minDaysLeft` days left by the context's clock. A valid certificate with fewer days left fails
 * with severity `warning`; anything else that fails is an error. Never throws.
 */
export async function runTlsCheck(check: TlsCheckDecl, ctx: CheckContext): Promise<CheckResult> {
  const result = (
    ok: boolean,
    message: string,
    extra: { evidence?: string; severity?: 'warning' } = {},
  ): CheckResult => ({
    name: check.name,
    kind: 'tls',
    ok,
    message,
    ...(extra.evidence !== undefined && { evidence: extra.evidence }),
    ...(extra.severity !== undefined && { severity: extra.severity }),
    at: ctx.now().toISOString(),
  });
  const host = ctx.resolve(check.host);
  const name = check.servername === undefined ? host : ctx.resolve(check.servername);
  const where = `${host ?? check.host}:${check.port}`;
  if (host === undefined || name === undefined) {
    return result(false, `references in the check cannot be resolved yet (${where})`);
  }
  let ca: string | undefined;
  if (check.ca !== undefined) {
    try {
      ca = await readFile(check.ca, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? String(e);
      return result(false, `${where}: cannot read the ca file ${check.ca} (${code})`);
    }
  }
  const shake = await handshake(host, check.port, name, ca, check.timeoutMs, ctx.signal);
  if (!shake.ok) return result(false, `${where}: ${shake.message}`);
  const cert = shake.cert;
  if (cert.valid_to === undefined) {
    return result(false, `${where}: the server presented no certificate`);
  }
  const notAfter = new Date(cert.valid_to);
  const msLeft = notAfter.getTime() - ctx.now().getTime();
  const when = Number.isNaN(notAfter.getTime()) ? cert.valid_to : notAfter.toISOString();
  const evidence = `subject ${dn(cert.subject)}; issuer ${dn(cert.issuer)}; notAfter ${when}; ${daysText(msLeft)}`;
  const about = `certificate for ${name}`;
  if (shake.error !== undefined) {
    const code = shake.error;
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
      return result(false, `${where}: ${about} does not match: ${shake.nameError ?? code}`, {
        evidence,
      });
    }
    const what = VERIFY_ERRORS[code] ?? code;
    const remedy = !UNTRUSTED.has(code)
      ? ''
      : check.ca === undefined
        ? ' (not signed by a root CA Node trusts; pass ca: the PEM file of the CA that signed it)'
        : ` (not signed by the CA in ${check.ca})`;
    const detail = code === 'CERT_HAS_EXPIRED' ? ` (notAfter ${when})` : remedy;
    return result(false, `${where}: ${what}${detail}`, { evidence });
  }
  if (msLeft <= 0) {
    return result(false, `${where}: certificate has expired (notAfter ${when})`, { evidence });
  }
  if (msLeft <= check.minDaysLeft * DAY_MS) {
    return result(
      false,
      `${where}: ${about} expires in ${days(msLeft)} (${when}), fewer than minDaysLeft ${check.minDaysLeft}`,
      { evidence, severity: 'warning' },
    );
  }
  return result(true, `${where}: ${about} is valid for ${days(msLeft)} more (until ${when})`, {
    evidence,
  });
}
