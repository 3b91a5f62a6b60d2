/**
 * Which table files LevelDB will read: those its current manifest lists.
 *
 * A process killed while LevelDB writes a table (a memtable flush, a
 * compaction) leaves that file cut short in the directory, but it is in no
 * manifest record yet: LevelDB deletes it as obsolete when it opens, and
 * never reads it. The table check (table-check.ts) therefore checks only
 * the live tables, or it would refuse the open of a copy that has nothing
 * wrong with it.
 *
 * `CURRENT` names the manifest; the manifest is a log (log-check.ts) of
 * version edits (LevelDB db/version_edit.cc): tagged fields, of which new
 * files (tag 7: level, number, size, smallest and largest keys) and deleted
 * files (tag 6: level, number) make the live set.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { logRecords } from './log-check.js';

const COMPARATOR = 1;
const LOG_NUMBER = 2;
const NEXT_FILE_NUMBER = 3;
const LAST_SEQUENCE = 4;
const COMPACT_POINTER = 5;
const DELETED_FILE = 6;
const NEW_FILE = 7;
const PREV_LOG_NUMBER = 9;

/** The file numbers of the tables the current manifest of `dir` lists; null when it cannot be read or parsed. */
export async function liveTableNumbers(dir: string): Promise<Set<number> | null> {
  let manifest: Buffer;
  try {
    const current = (await readFile(join(dir, 'CURRENT'), 'utf8')).trim();
    if (!/^MANIFEST-\d+$/.test(current)) return null;
    manifest = await readFile(join(dir, current));
  } catch {
    return null;
  }
  return tablesOfManifest(manifest);
}

/** The live table numbers a manifest's version edits leave; null when an edit does not parse. */
export function tablesOfManifest(manifest: Uint8Array): Set<number> | null {
  const live = new Set<number>();
  for (const edit of logRecords(manifest)) {
    const reader = new EditReader(edit);
    while (!reader.done) {
      const tag = reader.varint();
      switch (tag) {
        case COMPARATOR: reader.slice(); break;
        case LOG_NUMBER: case PREV_LOG_NUMBER: case NEXT_FILE_NUMBER: case LAST_SEQUENCE: reader.varint(); break;
        case COMPACT_POINTER: reader.varint(); reader.slice(); break;
        case DELETED_FILE: reader.varint(); live.delete(reader.varint()); break;
        case NEW_FILE: {
          reader.varint();
          const number = reader.varint();
          reader.varint();
          reader.slice();
          reader.slice();
          live.add(number);
          break;
        }
        default: return null;
      }
      if (reader.failed) return null;
    }
  }
  return live;
}

class EditReader {
  private p = 0;
  failed = false;

  constructor(private readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.failed || this.p >= this.bytes.length;
  }

  /** A varint up to 2^53 (file numbers, levels, lengths). */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (this.p >= this.bytes.length) break;
      const byte = this.bytes[this.p++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
    this.failed = true;
    return 0;
  }

  /** A length-prefixed slice, skipped. */
  slice(): void {
    const length = this.varint();
    if (this.p + length > this.bytes.length) this.failed = true;
    this.p += length;
  }
}
