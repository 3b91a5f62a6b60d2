/**
 * glibc's malloc, asked to give back what it holds free. Memory that V8's
 * compiler threads, LevelDB and request buffers free goes back to malloc's
 * arenas, not to the kernel: glibc returns only the top of the main heap on
 * its own (`MALLOC_TRIM_THRESHOLD_`), and a page in the middle stays resident
 * until `malloc_trim`, which releases every whole free page of every arena
 * (madvise). Measured under issue 23's R8 (250,000 small fuzzed bodies): RSS
 * rose to 536 MB with 105 MB of live JS objects and 248 MB free in malloc's
 * main heap; one `malloc_trim(0)` brought it to 332 MB.
 *
 * Called through koffi (a foreign-function interface with prebuilt binaries:
 * no compiler at install time) since Node exposes neither function. Where
 * libc is not glibc ≥ 2.33 (musl, macOS) there is nothing to call: `glibcHeap()`
 * answers undefined and the process goes on without it.
 */
import { createRequire } from 'node:module';

export interface NativeHeap {
  /** Bytes malloc holds free in its arenas (`mallinfo2().fordblks`). */
  freeBytes(): number;
  /** Gives every whole free page back to the kernel (`malloc_trim(0)`). */
  trim(): void;
}

let loaded: NativeHeap | null | undefined;

/** The process's glibc heap, or undefined where it cannot be reached (loaded once). */
export function glibcHeap(): NativeHeap | undefined {
  if (loaded === undefined) loaded = load();
  return loaded ?? undefined;
}

function load(): NativeHeap | null {
  if (process.platform !== 'linux') return null;
  try {
    // koffi is CommonJS.
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    const libc = koffi.load('libc.so.6');
    const size = 'size_t';
    koffi.struct('mallinfo2', {
      arena: size, ordblks: size, smblks: size, hblks: size, hblkhd: size, usmblks: size, fsmblks: size, uordblks: size, fordblks: size, keepcost: size,
    });
    const mallinfo2 = libc.func('mallinfo2 mallinfo2(void)') as () => { fordblks: number | bigint };
    const mallocTrim = libc.func('int malloc_trim(size_t pad)') as (pad: number) => number;
    return {
      freeBytes: () => Number(mallinfo2().fordblks),
      trim: () => {
        mallocTrim(0);
      },
    };
  } catch {
    return null;
  }
}
