// For the packaging test: reads the entries of a zip archive (a .vsix is one) with node's zlib, so
// the test needs no unzip on the machine and no zip package among the dependencies.
import * as zlib from 'node:zlib';

export interface ZipEntry {
  name: string;
  data: Buffer;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_HEADER = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

// The end-of-central-directory record is the last 22 bytes plus a comment of up to 64 KiB, so it is
// found by scanning backwards for its signature.
function endOfCentralDirectory(zip: Buffer): number {
  const earliest = Math.max(0, zip.length - 22 - 0xffff);
  for (let at = zip.length - 22; at >= earliest; at--) {
    if (zip.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) return at;
  }
  throw new Error('not a zip archive: no end-of-central-directory record');
}

// Every entry, in central-directory order, with its contents inflated. Zip64 archives and
// encrypted entries, which vsce never writes, are refused rather than misread.
export function readZip(zip: Buffer): ZipEntry[] {
  const end = endOfCentralDirectory(zip);
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  if (count === 0xffff || at === 0xffffffff) throw new Error('zip64 archives are not supported');
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== CENTRAL_DIRECTORY_HEADER)
      throw new Error(`zip central directory entry ${i} has a bad signature`);
    const flags = zip.readUInt16LE(at + 8);
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const localHeader = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    if (flags & 1) throw new Error(`zip entry ${name} is encrypted`);
    if (zip.readUInt32LE(localHeader) !== LOCAL_FILE_HEADER)
      throw new Error(`zip entry ${name} has a bad local header`);
    // The local header's own name and extra lengths may differ from the central directory's.
    const start = localHeader + 30 + zip.readUInt16LE(localHeader + 26) + zip.readUInt16LE(localHeader + 28);
    const raw = zip.subarray(start, start + compressedSize);
    let data: Buffer;
    if (method === STORED) data = Buffer.from(raw);
    else if (method === DEFLATED) data = zlib.inflateRawSync(raw);
    else throw new Error(`zip entry ${name} uses compression method ${method}`);
    if (data.length !== size)
      throw new Error(`zip entry ${name} inflated to ${data.length} bytes, the directory says ${size}`);
    entries.push({ name, data });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}
