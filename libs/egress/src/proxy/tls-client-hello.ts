// Reads the server name (SNI) a TLS client asks for from the first bytes it sends in a
// CONNECT tunnel, without decrypting anything (RFC 8446 4.1.2, RFC 6066 3): the proxy
// checks it names the host the tunnel was opened to, so that a tunnel to an allowed
// host cannot carry a handshake for another one (domain fronting).
export type ClientHello =
  // More bytes are needed.
  | { kind: 'incomplete' }
  | { kind: 'not-tls' }
  // A ClientHello; serverName null when it names none.
  | { kind: 'tls'; serverName: string | null };

const RECORD_HEADER = 5;
const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const SERVER_NAME_EXTENSION = 0x0000;
const HOST_NAME = 0x00;
// A ClientHello larger than this is refused rather than buffered.
export const MAX_CLIENT_HELLO_BYTES = 64 * 1024;

export function readClientHello(data: Buffer): ClientHello {
  if (data.length === 0) return { kind: 'incomplete' };
  if (data[0] !== HANDSHAKE) return { kind: 'not-tls' };
  // The handshake message may span several records: join their payloads.
  const payload: Buffer[] = [];
  let offset = 0;
  let have = 0;
  let needed = -1;
  while (needed < 0 || have < needed) {
    if (data.length < offset + RECORD_HEADER) return { kind: 'incomplete' };
    if (data[offset] !== HANDSHAKE || data[offset + 1] !== 0x03) return { kind: 'not-tls' };
    const length = data.readUInt16BE(offset + 3);
    if (length === 0 || length > 16_384 + 2048) return { kind: 'not-tls' };
    if (data.length < offset + RECORD_HEADER + length) return { kind: 'incomplete' };
    payload.push(data.subarray(offset + RECORD_HEADER, offset + RECORD_HEADER + length));
    have += length;
    offset += RECORD_HEADER + length;
    if (needed < 0) {
      const first = Buffer.concat(payload);
      if (first.length < 4) continue;
      if (first[0] !== CLIENT_HELLO) return { kind: 'not-tls' };
      needed = 4 + first.readUIntBE(1, 3);
      if (needed > MAX_CLIENT_HELLO_BYTES) return { kind: 'not-tls' };
    }
  }
  const hello = Buffer.concat(payload).subarray(4, needed);
  const serverName = serverNameOf(hello);
  return serverName === undefined ? { kind: 'not-tls' } : { kind: 'tls', serverName };
}

// The host name of the server_name extension; null without one; undefined when the
// message is malformed.
function serverNameOf(hello: Buffer): string | null | undefined {
  let at = 2 + 32; // legacy_version, random
  const skip = (lengthBytes: number): boolean => {
    if (at + lengthBytes > hello.length) return false;
    const length = hello.readUIntBE(at, lengthBytes);
    at += lengthBytes + length;
    return at <= hello.length;
  };
  if (!skip(1) || !skip(2) || !skip(1)) return undefined; // session id, cipher suites, compression
  if (at === hello.length) return null; // no extensions
  if (at + 2 > hello.length) return undefined;
  const end = at + 2 + hello.readUInt16BE(at);
  at += 2;
  if (end > hello.length) return undefined;
  while (at + 4 <= end) {
    const type = hello.readUInt16BE(at);
    const length = hello.readUInt16BE(at + 2);
    const body = hello.subarray(at + 4, at + 4 + length);
    at += 4 + length;
    if (at > end) return undefined;
    if (type !== SERVER_NAME_EXTENSION) continue;
    if (body.length < 2) return undefined;
    let p = 2;
    const listEnd = Math.min(body.length, 2 + body.readUInt16BE(0));
    while (p + 3 <= listEnd) {
      const nameType = body[p]!;
      const nameLength = body.readUInt16BE(p + 1);
      const name = body.subarray(p + 3, p + 3 + nameLength);
      p += 3 + nameLength;
      if (p > listEnd) return undefined;
      if (nameType === HOST_NAME) return name.toString('latin1');
    }
    return null;
  }
  return null;
}
