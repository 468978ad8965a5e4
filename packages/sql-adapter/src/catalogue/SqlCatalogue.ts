import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { mayPresume, presume, read, releaseLocksBeforeFlush } from "../UnitOfWork.ts"
import { type Product, type ProductFilter, skuTakenMessage } from "@leadline/core/catalogue/Product"
import { merged, CatalogueRepo, type StockMove } from "@leadline/core/catalogue/CatalogueRepo"
import { Conflict, InsufficientStock } from "@leadline/core/Errors"
import { iso, json, orDie, textArray } from "../internal/store.ts"

interface ProductRow {
  readonly id: string
  readonly sku: string
  readonly name: string
  readonly description: string | null
  readonly unit_amount: unknown
  readonly currency: string
  readonly stock: unknown
  readonly active: boolean
  readonly image_url: string | null
  readonly url: string | null
  readonly attributes: unknown
  readonly version: unknown
  readonly created_at: unknown
  readonly updated_at: unknown
}

// bigint comes back from the pg driver as a string (it may not fit a number): Number() it.
const toProduct = (row: ProductRow): Product => ({
  id: row.id,
  sku: row.sku,
  name: row.name,
  description: row.description,
  unit_amount: Number(row.unit_amount),
  currency: row.currency,
  stock: row.stock === null || row.stock === undefined ? null : Number(row.stock),
  active: row.active,
  image_url: row.image_url,
  url: row.url,
  attributes: json<Record<string, unknown>>(row.attributes),
  version: Number(row.version),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

const COLUMNS =
  "id, sku, name, description, unit_amount, currency, stock, active, image_url, url, attributes, version, created_at, updated_at"

/** `q` as an ILIKE pattern: its own `%`, `_` and `\` match themselves (`\` is LIKE's default escape). */
export const containsPattern = (q: string): string => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** A PostgreSQL int[] literal, for `unnest(…::int[])`. */
const intArray = (values: ReadonlyArray<number>): string => `{${values.map((n) => Math.trunc(n)).join(",")}}`

export const layer = Layer.effect(
  CatalogueRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.unsafe(COLUMNS)
    const skuTaken = (sku: string) => new Conflict({ message: skuTakenMessage(sku) })
    const one = (statement: Effect.Effect<ReadonlyArray<ProductRow>, any>) =>
      orDie(statement).pipe(Effect.map(([row]) => (row === undefined ? undefined : toProduct(row))))

    const filtered = (accountId: string, filter: ProductFilter) =>
      sql.and([
        sql`account_id = ${accountId}::uuid`,
        ...(filter.active === undefined ? [] : [sql`active = ${filter.active}`]),
        ...(filter.sku === undefined ? [] : [sql`sku = ${filter.sku}`]),
        ...(filter.q === undefined
          ? []
          : [sql`(name ILIKE ${containsPattern(filter.q)} OR sku ILIKE ${containsPattern(filter.q)})`])
      ])

    /**
     * The tracked products among the moves' (merged: sorted by id, one per product), locked in
     * that order with `COLLATE "C"`, so every transaction that moves stock takes its locks in the
     * same order and none waits on another in a cycle. The row read is the one as locked: a
     * concurrent writer's stock, or a product that stopped being tracked and is left out.
     */
    const lockTracked = (accountId: string, moves: ReadonlyArray<StockMove>) =>
      orDie(sql<{ id: string; sku: string; stock: number }>`
        SELECT id, sku, stock FROM products
        WHERE account_id = ${accountId}::uuid AND id = ANY(${textArray(moves.map((m) => m.productId))}::text[])
          AND stock IS NOT NULL
        ORDER BY id COLLATE "C" FOR UPDATE`).pipe(
        Effect.map((rows) => new Map(rows.map((row) => [row.id, { sku: row.sku, stock: Number(row.stock) }])))
      )

    /** The tracked products of `moves` with what each wants, their rows locked in id order. */
    const lockedForTaking = (accountId: string, moves: ReadonlyArray<StockMove>) =>
      sql`SELECT t.id, t.sku, t.stock, m.quantity
          FROM products AS t
          JOIN unnest(${textArray(moves.map((m) => m.productId))}::text[],
                      ${intArray(moves.map((m) => m.quantity))}::int[]) AS m(id, quantity) ON m.id = t.id
          WHERE t.account_id = ${accountId}::uuid AND t.stock IS NOT NULL
          ORDER BY t.id COLLATE "C"
          FOR UPDATE OF t`

    /** Adds each delta to its product (tracked, and locked by `lockTracked`) in one statement. */
    const moveStock = (
      accountId: string,
      deltas: ReadonlyArray<{ readonly productId: string; readonly delta: number }>,
      now: string
    ) =>
      orDie(sql`
        UPDATE products AS p
        SET stock = p.stock + m.delta, version = p.version + 1, updated_at = ${now}::timestamptz
        FROM unnest(${textArray(deltas.map((d) => d.productId))}::text[],
                    ${intArray(deltas.map((d) => d.delta))}::int[]) AS m(id, delta)
        WHERE p.account_id = ${accountId}::uuid AND p.id = m.id AND p.stock IS NOT NULL`).pipe(Effect.asVoid)

    return CatalogueRepo.of({
      insert: (accountId, p) =>
        // ON CONFLICT instead of catching the violation: a failed statement would poison the caller's transaction.
        orDie(sql<{ id: string }>`
          INSERT INTO products (account_id, ${columns})
          VALUES (${accountId}::uuid, ${p.id}, ${p.sku}, ${p.name}, ${p.description}, ${p.unit_amount}::bigint,
                  ${p.currency}, ${p.stock}::int, ${p.active}, ${p.image_url}, ${p.url},
                  ${JSON.stringify(p.attributes)}::jsonb, ${p.version}::int, ${p.created_at}::timestamptz,
                  ${p.updated_at}::timestamptz)
          ON CONFLICT (account_id, sku) DO NOTHING
          RETURNING id`).pipe(Effect.flatMap((rows) => (rows.length > 0 ? Effect.void : Effect.fail(skuTaken(p.sku))))),
      list: (accountId, filter, page) => {
        const where = filtered(accountId, filter)
        return orDie(
          Effect.all(
            [
              sql<ProductRow>`SELECT ${columns} FROM products WHERE ${where}
                              ORDER BY created_at DESC, id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`,
              sql<{ total: number }>`SELECT count(*)::int AS total FROM products WHERE ${where}`
            ],
            { concurrency: "unbounded" }
          )
        ).pipe(Effect.map(([rows, [count]]) => ({ items: rows.map(toProduct), total: count?.total ?? 0 })))
      },
      find: (accountId, id) =>
        one(sql<ProductRow>`SELECT ${columns} FROM products WHERE account_id = ${accountId}::uuid AND id = ${id}`),
      findForUpdate: (accountId, id) =>
        one(
          sql<ProductRow>`SELECT ${columns} FROM products WHERE account_id = ${accountId}::uuid AND id = ${id}
                          FOR UPDATE`
        ),
      findMany: (accountId, keys) =>
        keys.ids.length === 0 && keys.skus.length === 0
          ? Effect.succeed([])
          : // Arrays as literals: the planner probes the primary key and the SKU index for each value.
            orDie(
              read(sql<ProductRow>`
                SELECT ${columns} FROM products
                WHERE account_id = ${accountId}::uuid
                  AND (id = ANY(${textArray(keys.ids)}::text[]) OR sku = ANY(${textArray(keys.skus)}::text[]))`)
            ).pipe(Effect.map((rows) => rows.map(toProduct))),
      update: (accountId, p) =>
        Effect.gen(function* () {
          // Checked first rather than caught: a failed statement would poison the caller's transaction.
          const holder = yield* orDie(
            sql<{ id: string }>`SELECT id FROM products
                                WHERE account_id = ${accountId}::uuid AND sku = ${p.sku} AND id <> ${p.id}`
          )
          if (holder.length > 0) return yield* skuTaken(p.sku)
          const rows = yield* sql<ProductRow>`
            UPDATE products SET sku = ${p.sku}, name = ${p.name}, description = ${p.description},
              unit_amount = ${p.unit_amount}::bigint, currency = ${p.currency}, stock = ${p.stock}::int,
              active = ${p.active}, image_url = ${p.image_url}, url = ${p.url},
              attributes = ${JSON.stringify(p.attributes)}::jsonb, version = ${p.version}::int,
              updated_at = ${p.updated_at}::timestamptz
            WHERE account_id = ${accountId}::uuid AND id = ${p.id}
            RETURNING ${columns}`.pipe(
            // A concurrent writer may take the SKU between the check and the write.
            Effect.catchIf(
              (error) => error.reason._tag === "UniqueViolation",
              () => Effect.fail(skuTaken(p.sku))
            ),
            Effect.catchTag("SqlError", (error) => orDie(Effect.fail(error)))
          )
          return rows[0] === undefined ? undefined : toProduct(rows[0])
        }),
      remove: (accountId, id) =>
        one(
          sql<ProductRow>`DELETE FROM products WHERE account_id = ${accountId}::uuid AND id = ${id}
                          RETURNING ${columns}`
        ),
      takeStock: (accountId, moves, now) =>
        Effect.gen(function* () {
          const wanted = merged(moves)
          if (wanted.length === 0) return
          if (yield* mayPresume) {
            // Enough stock presumed (UnitOfWork.ts): the units are taken with the unit's end, the rows
            // locked in id order as below; a product short of them breaks `stock >= 0` and the unit
            // runs again, asking as below. Every order for the product waits on its row: the unit
            // frees it as its statement ends, before the commit's flush.
            yield* releaseLocksBeforeFlush
            return yield* presume(sql`
              UPDATE products AS p
              SET stock = p.stock - l.quantity, version = p.version + 1, updated_at = ${now}::timestamptz
              FROM (${lockedForTaking(accountId, wanted)}) AS l
              WHERE p.account_id = ${accountId}::uuid AND p.id = l.id`)
          }
          // One round trip, because every order for a product waits on its row from here to the commit:
          // the tracked rows are locked in id order (after the wait, FOR UPDATE reads their latest
          // stock), and the UPDATE takes the units only if every one of them has enough.
          const rows = yield* orDie(sql<{ id: string; sku: string; stock: number; quantity: number; taken: number }>`
            WITH locked AS (${lockedForTaking(accountId, wanted)}), taken AS (
              UPDATE products AS p
              SET stock = p.stock - l.quantity, version = p.version + 1, updated_at = ${now}::timestamptz
              FROM locked AS l
              WHERE p.account_id = ${accountId}::uuid AND p.id = l.id
                AND NOT EXISTS (SELECT 1 FROM locked WHERE locked.stock < locked.quantity)
              RETURNING p.id
            )
            SELECT id, sku, stock, quantity, (SELECT count(*) FROM taken)::int AS taken FROM locked`)
          if (rows.length === 0 || rows[0]!.taken === rows.length) return
          // Nothing was taken: name the first short product in the lock order, as the store promises.
          const stock = new Map(rows.map((row) => [row.id, row]))
          for (const move of wanted) {
            const row = stock.get(move.productId)
            if (row !== undefined && Number(row.stock) < move.quantity) {
              return yield* new InsufficientStock({
                sku: row.sku,
                available: Number(row.stock),
                requested: move.quantity
              })
            }
          }
        }),
      returnStock: (accountId, moves, now) =>
        Effect.gen(function* () {
          const wanted = merged(moves)
          if (wanted.length === 0) return
          // Locked in the same order as takeStock first: an UPDATE alone locks in whatever order its plan reads.
          const tracked = yield* lockTracked(accountId, wanted)
          const giving = wanted.filter((move) => tracked.has(move.productId))
          if (giving.length > 0) {
            yield* moveStock(
              accountId,
              giving.map((move) => ({ productId: move.productId, delta: move.quantity })),
              now
            )
          }
        })
    })
  })
)
