import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Transactor } from "@leadline/core/Transactor"
import * as MemoryTable from "../src/MemoryTable.ts"
import * as MemoryTransaction from "../src/MemoryTransaction.ts"

interface Contact {
  readonly accountId: string
  readonly id: string
  readonly phone: string
  readonly createdAt: string
}

const contacts = () =>
  MemoryTable.make({
    primaryKey: (row: Contact) => MemoryTable.key(row.accountId, row.id),
    unique: { phone: (row) => MemoryTable.key(row.accountId, row.phone) },
    indexes: { account: (row) => row.accountId, phone: (row) => row.phone },
    order: MemoryTable.newestFirst(
      (row: Contact) => row.createdAt,
      (row) => row.id
    )
  })

const contact = (id: string, phone: string, second: number, accountId = "acc_1"): Contact => ({
  accountId,
  id,
  phone,
  createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString()
})

const ids = (rows: Iterable<Contact>) => [...rows].map((row) => row.id)

/** Runs `step` inside a transaction that then fails, so every write in it is undone. */
const rolledBack = (step: (tx: MemoryTransaction.Tx) => void) =>
  Effect.gen(function* () {
    const transactor = yield* Transactor
    const exit = yield* Effect.exit(
      transactor.withTransaction(Effect.andThen(MemoryTransaction.atomically(step), Effect.fail("boom")))
    )
    assert.deepStrictEqual(exit, Exit.fail("boom"))
  }).pipe(Effect.provide(MemoryTransaction.layer))

describe("MemoryTable", () => {
  it("refuses a row that breaks a unique constraint, names the constraint, and leaves the table as it was", () => {
    const table = contacts()
    const tx = MemoryTransaction.autocommit
    assert.isUndefined(table.insert(tx, contact("a", "+1", 1)))
    table.insert(tx, contact("b", "+2", 2))
    // The same phone in another account is another key.
    assert.isUndefined(table.insert(tx, contact("c", "+1", 3, "acc_2")))

    const inserted = table.insert(tx, contact("d", "+1", 4))
    assert.instanceOf(inserted, MemoryTable.Violation)
    assert.strictEqual(inserted?.constraint, "phone")
    assert.isUndefined(table.get(MemoryTable.key("acc_1", "d")))

    const updated = table.update(tx, contact("b", "+1", 2))
    assert.instanceOf(updated, MemoryTable.Violation)
    assert.strictEqual(table.get(MemoryTable.key("acc_1", "b"))?.phone, "+2")
    assert.strictEqual(table.find("phone", MemoryTable.key("acc_1", "+1"))?.id, "a")
    assert.strictEqual(table.find("phone", MemoryTable.key("acc_1", "+2"))?.id, "b")
    assert.strictEqual(table.size, 3)
    assert.deepStrictEqual(ids(table.scan("account", "acc_1")), ["b", "a"])
  })

  it.effect("undoes inserts, updates and deletes when the transaction fails", () =>
    Effect.gen(function* () {
      const table = contacts()
      const tx = MemoryTransaction.autocommit
      table.insert(tx, contact("a", "+1", 1))
      table.insert(tx, contact("b", "+2", 2))
      table.insert(tx, contact("c", "+3", 3))
      const before = [...table.rows()]

      yield* rolledBack((tx) => {
        table.insert(tx, contact("d", "+4", 4))
        table.update(tx, contact("a", "+9", 9))
        table.remove(tx, MemoryTable.key("acc_1", "b"))
        // A later write to a row written in the same transaction is undone too.
        table.update(tx, contact("d", "+5", 5))
        table.remove(tx, MemoryTable.key("acc_1", "c"))
      })

      assert.sameDeepMembers([...table.rows()], before)
      assert.deepStrictEqual(ids(table.scan("account", "acc_1")), ["c", "b", "a"])
      assert.strictEqual(table.find("phone", MemoryTable.key("acc_1", "+1"))?.id, "a")
      assert.isUndefined(table.find("phone", MemoryTable.key("acc_1", "+9")))
      assert.isUndefined(table.find("phone", MemoryTable.key("acc_1", "+5")))
      assert.deepStrictEqual(ids(table.scan("phone", "+2")), ["b"])

      // The phone a rolled-back insert took is free again.
      assert.isUndefined(table.insert(MemoryTransaction.autocommit, contact("e", "+4", 6)))
    })
  )

  it("finds rows under their new keys after an update, in order, and pages them", () => {
    const table = contacts()
    const tx = MemoryTransaction.autocommit
    for (let second = 1; second <= 5; second++) table.insert(tx, contact(`c${second}`, `+${second}`, second))

    assert.deepStrictEqual(table.update(tx, contact("c2", "+7", 2)), contact("c2", "+2", 2))
    assert.deepStrictEqual(ids(table.scan("phone", "+7")), ["c2"])
    assert.deepStrictEqual(ids(table.scan("phone", "+2")), [])
    assert.strictEqual(table.find("phone", MemoryTable.key("acc_1", "+7"))?.id, "c2")
    assert.isUndefined(table.find("phone", MemoryTable.key("acc_1", "+2")))

    // Newest first; a row whose created_at changes moves to its new place.
    table.update(tx, contact("c1", "+1", 9))
    assert.deepStrictEqual(ids(table.scan("account", "acc_1")), ["c1", "c5", "c4", "c3", "c2"])
    const page = table.page("account", "acc_1", { limit: 2, offset: 1 })
    assert.deepStrictEqual({ ids: ids(page.items), total: page.total }, { ids: ["c5", "c4"], total: 5 })
    const filtered = table.page("account", "acc_1", { limit: 1, offset: 1 }, (row) => row.phone !== "+5")
    assert.deepStrictEqual({ ids: ids(filtered.items), total: filtered.total }, { ids: ["c4"], total: 4 })

    assert.strictEqual(table.remove(tx, MemoryTable.key("acc_1", "c4"))?.id, "c4")
    assert.deepStrictEqual(ids(table.scan("account", "acc_1")), ["c1", "c5", "c3", "c2"])
    assert.strictEqual(table.update(tx, contact("missing", "+8", 8)), undefined)
  })

  it("keeps rows ranked equal in insertion order, the latest first when read newest first", () => {
    const table = MemoryTable.make({
      primaryKey: (row: Contact) => row.id,
      indexes: {
        newest: (row) => row.accountId,
        oldest: { key: (row) => row.accountId, order: MemoryTable.ascending(() => 0) }
      },
      order: MemoryTable.newestFirst((row: Contact) => row.createdAt)
    })
    const tx = MemoryTransaction.autocommit
    for (const id of ["x", "a", "m"]) table.insert(tx, contact(id, id, 1))
    assert.deepStrictEqual(ids(table.scan("newest", "acc_1")), ["m", "a", "x"])
    assert.deepStrictEqual(ids(table.scan("oldest", "acc_1")), ["x", "a", "m"])
  })
})
