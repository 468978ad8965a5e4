import { createHash, randomUUID } from "node:crypto"
import { createReadStream, createWriteStream } from "node:fs"
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { MediaStore } from "@leadline/core/messages/MediaStore"
import { Effect, Layer, Stream } from "effect"

/**
 * `MediaStore` in a directory (docs/contract-messaging.md §5.8), the server's default: each file
 * under a name hashed from its key (no key can reach outside the directory), its content type in
 * a small file beside it. Bytes are written to a temporary file as they arrive and renamed into
 * place whole, so a reader never sees half a file and a failed write leaves nothing.
 */

const nameOf = (key: string) => createHash("sha256").update(key).digest("hex")

export const make = (directory: string) =>
  Effect.gen(function* () {
    yield* Effect.promise(() => mkdir(join(directory, "tmp"), { recursive: true }))
    const paths = (key: string) => {
      const name = nameOf(key)
      // Two levels of 256 folders: a directory of a million files is slow on most file systems.
      const folder = join(directory, name.slice(0, 2), name.slice(2, 4))
      return { folder, data: join(folder, name), type: join(folder, `${name}.type`) }
    }

    return MediaStore.of({
      put: (key, contentType, bytes) =>
        Effect.gen(function* () {
          const target = paths(key)
          const temporary = join(directory, "tmp", randomUUID())
          const write = Effect.gen(function* () {
            const out = yield* Effect.sync(() => createWriteStream(temporary))
            let size = 0
            // Each chunk waits for the file to take it (`drain`): memory holds one chunk at a time.
            yield* Stream.runForEach(bytes, (chunk) =>
              Effect.callback<void>((resume) => {
                size += chunk.length
                if (out.write(chunk)) resume(Effect.void)
                else out.once("drain", () => resume(Effect.void))
              })
            ).pipe(Effect.onExit(() => Effect.callback<void>((resume) => void out.end(() => resume(Effect.void)))))
            yield* Effect.promise(async () => {
              await mkdir(target.folder, { recursive: true })
              await writeFile(target.type, contentType)
              await rename(temporary, target.data)
            })
            return size
          })
          return yield* Effect.onError(write, () => Effect.promise(() => rm(temporary, { force: true })))
        }),
      get: (key) =>
        Effect.promise(async () => {
          const target = paths(key)
          try {
            const [info, contentType] = await Promise.all([stat(target.data), readFile(target.type, "utf8")])
            return {
              contentType,
              size: info.size,
              bytes: Stream.fromAsyncIterable(
                createReadStream(target.data, { highWaterMark: 64 * 1024 }) as AsyncIterable<Uint8Array>,
                (error) => error
              ).pipe(Stream.orDie)
            }
          } catch {
            return undefined
          }
        }),
      remove: (key) =>
        Effect.promise(async () => {
          const target = paths(key)
          await rm(target.data, { force: true })
          await rm(target.type, { force: true })
        })
    })
  })

/** The store in `directory`, made if missing. */
export const layer = (directory: string): Layer.Layer<MediaStore> => Layer.effect(MediaStore, make(directory))
