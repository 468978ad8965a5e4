import { Effect, Layer } from "effect"
import {
  IdempotencyStore,
  type KeyRef,
  type Reservation,
  type StoredResponse
} from "@leadline/core/idempotency/IdempotencyStore"
import { onRollback } from "./MemoryTransaction.ts"

interface Entry {
  readonly fingerprint: string
  readonly expiresAt: number
  response: StoredResponse | undefined
}

const id = (ref: KeyRef) => `${ref.accountId}\u0000${ref.key}`

export const layer = Layer.sync(IdempotencyStore)(() => {
  const entries = new Map<string, Entry>()
  return IdempotencyStore.of({
    reserve: (ref, fingerprint, now, expiresAt) =>
      Effect.suspend((): Effect.Effect<Reservation> => {
        const existing = entries.get(id(ref))
        if (existing !== undefined && existing.expiresAt > now) {
          return Effect.succeed<Reservation>(
            existing.response === undefined
              ? { _tag: "InProgress", fingerprint: existing.fingerprint }
              : { _tag: "Completed", fingerprint: existing.fingerprint, response: existing.response }
          )
        }
        const entry: Entry = { fingerprint, expiresAt, response: undefined }
        entries.set(id(ref), entry)
        return Effect.as(
          onRollback(() => {
            if (entries.get(id(ref)) === entry) entries.delete(id(ref))
          }),
          { _tag: "Reserved" as const }
        )
      }),
    complete: (ref, response) =>
      Effect.sync(() => {
        const entry = entries.get(id(ref))
        if (entry !== undefined) entry.response = response
      }),
    release: (ref) => Effect.sync(() => void entries.delete(id(ref))),
    purgeExpired: (now) =>
      Effect.sync(() => {
        let purged = 0
        for (const [key, entry] of entries) {
          if (entry.expiresAt <= now) {
            entries.delete(key)
            purged++
          }
        }
        return purged
      })
  })
})
