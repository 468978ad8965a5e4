import { createHash, randomUUID } from "node:crypto"
import { createReadStream } from "node:fs"
import { type FileHandle, mkdir, open, rename, rm } from "node:fs/promises"
import { join } from "node:path"
import { keyText, type MediaKey, MediaStore } from "@leadline/core/messages/MediaStore"
import { Effect, Layer, Stream } from "effect"

/**
 * `MediaStore` in a directory (docs/contract-messaging.md §5.8), the server's default: each file
 * under a name hashed from its key (no key can reach outside the directory), in one of 256
 * folders. A file is its content type on a first line, then its bytes: one file per media, so
 * keeping one costs an open, its writes, a close and a rename. Bytes are written to a temporary
 * file as they arrive and renamed into place whole, so a reader never sees half a file and a
 * failed write leaves nothing.
 */

const nameOf = (key: string) => createHash("sha256").update(key).digest("hex")

const encoder = new TextEncoder()
const NEWLINE = 0x0a
/** What is gathered before a write: a small file is written at once, a large one in pieces this big. */
const WRITE_BYTES = 256 * 1024
/** Content types are short: the first line is read in one small read. */
const HEADER_BYTES = 256

/** Every byte of `chunks`, however many calls it takes (a write may take less than it was given). */
const writeAll = async (file: FileHandle, chunks: ReadonlyArray<Uint8Array>) => {
  let rest = chunks.filter((chunk) => chunk.length > 0)
  while (rest.length > 0) {
    let { bytesWritten } = await file.writev(rest)
    while (rest.length > 0 && bytesWritten >= rest[0]!.length) {
      bytesWritten -= rest[0]!.length
      rest = rest.slice(1)
    }
    if (bytesWritten > 0) rest = [rest[0]!.subarray(bytesWritten), ...rest.slice(1)]
  }
}

export const make = (directory: string) =>
  Effect.gen(function* () {
    yield* Effect.promise(() => mkdir(join(directory, "tmp"), { recursive: true }))
    const pathOf = (key: MediaKey) => {
      const name = nameOf(keyText(key))
      return { folder: join(directory, name.slice(0, 2)), data: join(directory, name.slice(0, 2), name) }
    }
    // Folders known to exist: a file in one costs no mkdir.
    const made = new Set<string>()
    const place = async (temporary: string, target: { readonly folder: string; readonly data: string }) => {
      if (!made.has(target.folder)) {
        await mkdir(target.folder, { recursive: true })
        made.add(target.folder)
      }
      await rename(temporary, target.data)
    }

    return MediaStore.of({
      put: (key, contentType, bytes) =>
        Effect.gen(function* () {
          const target = pathOf(key)
          const temporary = join(directory, "tmp", randomUUID())
          const write = Effect.gen(function* () {
            const size = yield* Effect.acquireUseRelease(
              Effect.promise(() => open(temporary, "w")),
              (file) =>
                Effect.gen(function* () {
                  // The content type cannot hold a line break (HTTP forbids it): the first one ends it.
                  let pending: Array<Uint8Array> = [encoder.encode(`${contentType.replace(/[\r\n]/g, "")}\n`)]
                  let pendingBytes = pending[0]!.length
                  let size = 0
                  // Chunks go to the file in one write per WRITE_BYTES (each write is a hop to libuv's
                  // threads, which on a busy core costs more than the copy): a 100 KB file is one write,
                  // and memory holds at most WRITE_BYTES of a large one.
                  const flush = Effect.suspend(() => {
                    const chunks = pending
                    pending = []
                    pendingBytes = 0
                    return Effect.promise(() => writeAll(file, chunks))
                  })
                  yield* Stream.runForEach(bytes, (chunk) => {
                    size += chunk.length
                    pending.push(chunk)
                    pendingBytes += chunk.length
                    return pendingBytes >= WRITE_BYTES ? flush : Effect.void
                  })
                  if (pendingBytes > 0) yield* flush
                  return size
                }),
              (file) => Effect.promise(() => file.close())
            )
            yield* Effect.promise(async () => {
              try {
                await place(temporary, target)
              } catch (error) {
                // A folder removed behind the store's back: made again, once.
                if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
                made.delete(target.folder)
                await place(temporary, target)
              }
            })
            return size
          })
          return yield* Effect.onError(write, () => Effect.promise(() => rm(temporary, { force: true })))
        }),
      get: (key) =>
        Effect.promise(async () => {
          const path = pathOf(key).data
          let file: Awaited<ReturnType<typeof open>>
          try {
            file = await open(path, "r")
          } catch {
            return undefined
          }
          let header: Uint8Array
          let size: number
          try {
            const first = new Uint8Array(HEADER_BYTES)
            const { bytesRead } = await file.read(first, 0, HEADER_BYTES, 0)
            header = first.subarray(0, bytesRead)
            size = (await file.stat()).size
          } finally {
            await file.close()
          }
          const end = header.indexOf(NEWLINE)
          if (end < 0) return undefined
          return {
            contentType: new TextDecoder().decode(header.subarray(0, end)),
            size: size - end - 1,
            // Opened when pulled: a caller that only needs the type and size (a 304) holds no file.
            bytes: Stream.suspend(() =>
              Stream.fromAsyncIterable(
                createReadStream(path, { start: end + 1, highWaterMark: 64 * 1024 }) as AsyncIterable<Uint8Array>,
                (error) => error
              )
            ).pipe(Stream.orDie)
          }
        }),
      remove: (key) => Effect.promise(() => rm(pathOf(key).data, { force: true }))
    })
  })

/** The store in `directory`, made if missing. */
export const layer = (directory: string): Layer.Layer<MediaStore> => Layer.effect(MediaStore, make(directory))
