import { Layer } from "effect"
import {
  IdempotencyStore,
  type KeyRef,
  type Reservation,
  type StoredResponse
} from "@leadline/core/idempotency/IdempotencyStore"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Entry {
  readonly accountId: string
  readonly key: string
  readonly fingerprint: string
  readonly expiresAt: number
  readonly response: StoredResponse | undefined
}

const id = (ref: KeyRef) => MemoryTable.key(ref.accountId, ref.key)

/** One record per (account, key); an expired record counts as absent. */
export const layer = Layer.sync(IdempotencyStore)(() => {
  const records = MemoryTable.make({ primaryKey: (record: Entry) => MemoryTable.key(record.accountId, record.key) })

  return IdempotencyStore.of({
    reserve: (ref, fingerprint, now, expiresAt) =>
      atomically((tx): Reservation => {
        const existing = records.get(id(ref))
        if (existing !== undefined && existing.expiresAt > now) {
          return existing.response === undefined
            ? { _tag: "InProgress", fingerprint: existing.fingerprint }
            : { _tag: "Completed", fingerprint: existing.fingerprint, response: existing.response }
        }
        const record: Entry = { accountId: ref.accountId, key: ref.key, fingerprint, expiresAt, response: undefined }
        if (existing === undefined) records.insert(tx, record)
        else records.update(tx, record)
        return { _tag: "Reserved" }
      }),
    complete: (ref, response) =>
      atomically((tx) => {
        const record = records.get(id(ref))
        if (record !== undefined) records.update(tx, { ...record, response })
      }),
    release: (ref) => atomically((tx) => void records.remove(tx, id(ref))),
    purgeExpired: (now) =>
      atomically((tx) => {
        const expired = [...records.rows()].filter((record) => record.expiresAt <= now)
        for (const record of expired) records.remove(tx, id(record))
        return expired.length
      })
  })
})
