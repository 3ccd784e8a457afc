// Certificates made by the real openssl for tests of the `tls` check, and TLS servers that present
// them on 127.0.0.1. Nothing is mocked: the check shakes hands with these servers.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createTcpServer } from 'node:net';
import type { Server as TcpServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import type { Server } from 'node:tls';

/** A key and certificate in PEM, and where their files are. */
export interface Pem {
  readonly key: string;
  readonly cert: string;
  readonly certFile: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('/usr/bin/openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

const CA_CONFIG = `[ ca ]
default_ca = tca
[ tca ]
database = db/index.txt
new_certs_dir = db
serial = db/serial
default_md = sha256
policy = anything
copy_extensions = none
unique_subject = no
[ anything ]
commonName = supplied
`;

/**
 * A test CA in a temporary directory, signing leaves for a DNS name. `openssl ca` is used (not `x509
 * -req`) because OpenSSL 3.0 has no -not_after, and an expired leaf needs a start and end date.
 */
export class TestCa {
  readonly dir = mkdtempSync(join(tmpdir(), 'tend-tls-certs-'));
  readonly certFile = join(this.dir, 'ca.pem');
  #serial = 0;

  constructor(readonly subject = 'Tend Test CA') {
    mkdirSync(join(this.dir, 'db'));
    writeFileSync(join(this.dir, 'db', 'index.txt'), '');
    writeFileSync(join(this.dir, 'db', 'serial'), '01\n');
    writeFileSync(join(this.dir, 'ca.cnf'), CA_CONFIG);
    openssl(this.dir, [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
      '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '3650', '-subj', `/CN=${subject}`,
    ]); // prettier-ignore
  }

  /** The CA certificate in PEM. */
  get cert(): string {
    return readFileSync(this.certFile, 'utf8');
  }

  /**
   * A leaf for `dns` signed by this CA: valid for `days` from now, or between two dates
   * (`YYYYMMDDHHMMSSZ`) when `dates` is given.
   */
  leaf(dns: string, validity: { days: number } | { start: string; end: string }): Pem {
    const n = ++this.#serial;
    const base = `leaf-${n}`;
    writeFileSync(
      join(this.dir, `${base}.ext`),
      `[ ext ]\nsubjectAltName = DNS:${dns}\nbasicConstraints = CA:FALSE\n`,
    );
    openssl(this.dir, [
      'req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
      '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${dns}`,
    ]); // prettier-ignore
    const dates =
      'days' in validity
        ? ['-days', String(validity.days)]
        : ['-startdate', validity.start, '-enddate', validity.end];
    openssl(this.dir, [
      'ca', '-batch', '-config', 'ca.cnf', '-cert', 'ca.pem', '-keyfile', 'ca.key',
      '-in', `${base}.csr`, '-out', `${base}.pem`, '-notext',
      '-extfile', `${base}.ext`, '-extensions', 'ext', ...dates,
    ]); // prettier-ignore
    return this.#pem(base);
  }

  /** A self-signed certificate for `dns`, valid for `days`. */
  selfSigned(dns: string, days: number): Pem {
    const base = `self-${++this.#serial}`;
    openssl(this.dir, [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
      '-keyout', `${base}.key`, '-out', `${base}.pem`, '-days', String(days),
      '-subj', `/CN=${dns}`, '-addext', `subjectAltName=DNS:${dns}`,
    ]); // prettier-ignore
    return this.#pem(base);
  }

  #pem(base: string): Pem {
    const certFile = join(this.dir, `${base}.pem`);
    return {
      key: readFileSync(join(this.dir, `${base}.key`), 'utf8'),
      cert: readFileSync(certFile, 'utf8'),
      certFile,
    };
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A TLS server on 127.0.0.1 presenting one certificate; it closes every connection it accepts. */
export interface TlsServer {
  readonly port: number;
  /** Stops it and starts it again on the same port with another certificate. */
  restart(pem: Pem): Promise<void>;
  stop(): Promise<void>;
}

function listen(server: Server | TcpServer, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

function close(server: Server | TcpServer, sockets: Set<Socket>): Promise<void> {
  for (const s of sockets) s.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Starts a TLS server presenting `pem` (on `port`, else a free one). */
export async function startTlsServer(pem: Pem, port = 0): Promise<TlsServer> {
  const sockets = new Set<Socket>();
  const make = (p: Pem) => {
    const server = createServer({ key: p.key, cert: p.cert }, (socket) => socket.end());
    server.on('connection', (s: Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    // A client hanging up mid-handshake (the check does, on a timeout) is not the server's error.
    server.on('tlsClientError', () => undefined);
    return server;
  };
  let server = make(pem);
  const bound = await listen(server, port);
  return {
    port: bound,
    restart: async (next) => {
      await close(server, sockets);
      server = make(next);
      await listen(server, bound);
    },
    stop: () => close(server, sockets),
  };
}

/** A TCP server on 127.0.0.1 that accepts connections and never says anything. */
export async function startSilentServer(): Promise<{ port: number; stop(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  const port = await listen(server, 0);
  return { port, stop: () => close(server, sockets) };
}

/** A port on 127.0.0.1 where nothing listens (it was free a moment ago). */
export async function refusedPort(): Promise<number> {
  const server = createTcpServer();
  const port = await listen(server, 0);
  await close(server, new Set());
  return port;
}
