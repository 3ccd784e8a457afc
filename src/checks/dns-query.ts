// One DNS question on the wire: UDP first, TCP when the answer comes back truncated. `dns-packet` is
// loaded by the first question a command asks (docs/decisions/0033-lazy-modules.md).
import type { Answer, DecodedPacket, RecordType } from 'dns-packet';
import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { connect, isIPv6 } from 'node:net';

/** Where to send a question. */
export interface DnsServer {
  readonly host: string;
  readonly port: number;
}

/** The parts of a response a check looks at. */
export interface DnsResponse {
  /** NOERROR, NXDOMAIN, SERVFAIL, REFUSED, … */
  readonly rcode: string;
  readonly answers: readonly Answer[];
  /** The transport that carried the answer used. */
  readonly via: 'udp' | 'tcp';
}

/** Why a question got no usable response. */
export type DnsFailure =
  | { readonly kind: 'timeout' }
  | { readonly kind: 'aborted' }
  | { readonly kind: 'error'; readonly message: string };

/**
 * Parses `host:port`, `host` (port 53), `[v6]:port` or a bare IPv6 address. Undefined when it is
 * none of these or the port is not 1-65535.
 */
export function parseServer(text: string): DnsServer | undefined {
  const t = text.trim();
  let host: string;
  let port = '53';
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(t);
  if (bracket) {
    host = bracket[1]!;
    port = bracket[2] ?? port;
    if (!isIPv6(host)) return undefined;
  } else if (isIPv6(t)) {
    host = t;
  } else {
    const m = /^([^\s:/[\]]+)(?::(\d+))?$/.exec(t);
    if (!m) return undefined;
    host = m[1]!;
    port = m[2] ?? port;
  }
  const n = /^\d{1,5}$/.test(port) ? Number(port) : 0;
  return n >= 1 && n <= 65535 ? { host, port: n } : undefined;
}

function reason(e: unknown): string {
  // The syscall in Node's message (`recvmsg ECONNREFUSED`) says little to someone reading a check.
  if ((e as NodeJS.ErrnoException).code === 'ECONNREFUSED') {
    return 'connection refused (ECONNREFUSED): nothing listens on that port';
  }
  return e instanceof Error ? e.message : String(e);
}

/** dns-packet's decoder, handed in by queryDns, which loads the package. */
type Decode = (buf: Buffer) => DecodedPacket;

type Outcome = { ok: true; packet: DecodedPacket } | { ok: false; failure: DnsFailure };

/**
 * Asks `server` for `name`/`type` (class IN, recursion desired so that resolvers answer too) and
 * returns the response, or why there is none: no answer within `timeoutMs` (both transports
 * together), aborted by `signal`, or a network error. Never throws.
 */
export async function queryDns(
  server: DnsServer,
  name: string,
  type: RecordType,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<{ ok: true; response: DnsResponse } | { ok: false; failure: DnsFailure }> {
  const { encode, decode, streamEncode, RECURSION_DESIRED } = await import('dns-packet');
  const id = randomInt(0, 65536);
  const question = {
    type: 'query' as const,
    id,
    flags: RECURSION_DESIRED,
    questions: [{ type, name: name.replace(/\.$/, '') || '.', class: 'IN' as const }],
  };
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const failed = (): { ok: false; failure: DnsFailure } => ({
    ok: false,
    failure: options.signal?.aborted ? { kind: 'aborted' } : { kind: 'timeout' },
  });
  if (signal.aborted) return failed();
  const udp = await overUdp(server, encode(question), id, signal, decode);
  if (!udp.ok) return udp.failure.kind === 'error' ? udp : failed();
  if (!udp.packet.flag_tc) return { ok: true, response: response(udp.packet, 'udp') };
  const tcp = await overTcp(server, streamEncode(question), id, signal, decode);
  if (!tcp.ok) return tcp.failure.kind === 'error' ? tcp : failed();
  return { ok: true, response: response(tcp.packet, 'tcp') };
}

function response(packet: DecodedPacket, via: 'udp' | 'tcp'): DnsResponse {
  // dns-packet decodes the rcode but its type declarations do not list it.
  const rcode = (packet as DecodedPacket & { rcode?: string }).rcode ?? 'NOERROR';
  return { rcode, answers: packet.answers ?? [], via };
}

function overUdp(
  server: DnsServer,
  message: Buffer,
  id: number,
  signal: AbortSignal,
  decode: Decode,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = createSocket(isIPv6(server.host) ? 'udp6' : 'udp4');
    let done = false;
    const finish = (outcome: Outcome) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      socket.close();
      resolve(outcome);
    };
    const onAbort = () => finish({ ok: false, failure: { kind: 'timeout' } });
    signal.addEventListener('abort', onAbort);
    if (signal.aborted) return onAbort();
    socket.on('error', (e) =>
      finish({ ok: false, failure: { kind: 'error', message: reason(e) } }),
    );
    socket.on('message', (msg) => {
      let packet: DecodedPacket;
      try {
        packet = decode(msg);
      } catch {
        return; // not a DNS message: keep waiting for ours
      }
      if (packet.id === id && packet.type === 'response') finish({ ok: true, packet });
    });
    // A connected socket hears "port unreachable" as ECONNREFUSED instead of waiting it out.
    socket.connect(server.port, server.host, () => {
      socket.send(message, (e) => {
        if (e) finish({ ok: false, failure: { kind: 'error', message: reason(e) } });
      });
    });
  });
}

function overTcp(
  server: DnsServer,
  message: Buffer,
  id: number,
  signal: AbortSignal,
  decode: Decode,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect({ host: server.host, port: server.port });
    let buffer = Buffer.alloc(0);
    let done = false;
    const finish = (outcome: Outcome) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(outcome);
    };
    const onAbort = () => finish({ ok: false, failure: { kind: 'timeout' } });
    signal.addEventListener('abort', onAbort);
    if (signal.aborted) return onAbort();
    socket.on('error', (e) =>
      finish({ ok: false, failure: { kind: 'error', message: reason(e) } }),
    );
    socket.on('connect', () => socket.write(message));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      while (buffer.length >= 2) {
        const length = buffer.readUInt16BE(0);
        if (buffer.length < 2 + length) return;
        const frame = buffer.subarray(2, 2 + length);
        buffer = buffer.subarray(2 + length);
        try {
          const packet = decode(frame);
          if (packet.id === id && packet.type === 'response') finish({ ok: true, packet });
        } catch (e) {
          finish({
            ok: false,
            failure: { kind: 'error', message: `bad TCP answer: ${reason(e)}` },
          });
        }
      }
    });
    socket.on('end', () =>
      finish({
        ok: false,
        failure: {
          kind: 'error',
          message: 'the server closed the TCP connection without answering',
        },
      }),
    );
  });
}
