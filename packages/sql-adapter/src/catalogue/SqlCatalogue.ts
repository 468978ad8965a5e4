import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { mayPresume, presume, read, releaseLocksBeforeFlush } from "../UnitOfWork.ts"
import { type Product, type ProductFilter, skuTakenMessage } from "@leadline/core/catalogue/Product"
import { merged, CatalogueRepo, type StockMove } from "@leadline/core/catalogue/CatalogueRepo"
import { OrderInputs } from "@leadline/core/orders/OrderInputs"
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

/** The stripes a tracked product's stock is spread over (migration 0030). */
export const STRIPES = 16

/** The columns a product row is written with; `stock`, `version` and `updated_at` are read through `READ`. */
const WRITTEN =
  "id, sku, name, description, unit_amount, currency, active, image_url, url, attributes, version, created_at, updated_at"

/**
 * A product as read: its own row (`p`) with its stripes' sum (`s`), the stock; its version moves
 * with every stock move and its `updated_at` with the last one (migration 0030).
 */
const READ = `p.id, p.sku, p.name, p.description, p.unit_amount, p.currency, s.stock, p.active, p.image_url, p.url,
  p.attributes, p.version + coalesce(s.moves, 0) AS version, p.created_at, greatest(p.updated_at, s.moved_at) AS updated_at`

/** Joined after `products AS p` (or a CTE named `p` with its columns): one row of sums per product. */
const STRIPES_OF_P = `CROSS JOIN LATERAL (
  SELECT sum(t.stock)::int AS stock, sum(t.moves)::int AS moves, max(t.updated_at) AS moved_at
  FROM product_stock AS t WHERE t.account_id = p.account_id AND t.product_id = p.id) AS s`

/** The stripes' numbers, as an int[] literal. */
const STRIPE_NUMBERS = `{${Array.from({ length: STRIPES }, (_, stripe) => stripe).join(",")}}`

/** `total` spread over the stripes: the first `total % STRIPES` get one more. */
const spread = (total: number): ReadonlyArray<number> =>
  Array.from({ length: STRIPES }, (_, stripe) => Math.floor(total / STRIPES) + (stripe < total % STRIPES ? 1 : 0))

/** `q` as an ILIKE pattern: its own `%`, `_` and `\` match themselves (`\` is LIKE's default escape). */
export const containsPattern = (q: string): string => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** A PostgreSQL int[] literal, for `unnest(…::int[])`. */
const intArray = (values: ReadonlyArray<number>): string => `{${values.map((n) => Math.trunc(n)).join(",")}}`

export const layer = Layer.effect(
  CatalogueRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const written = sql.unsafe(WRITTEN)
    const readColumns = sql.unsafe(READ)
    const stripesOfP = sql.unsafe(STRIPES_OF_P)
    /** The connection's own stripe: the backend's, so concurrent orders mostly take from different rows. */
    const ownStripe = sql.unsafe(`pg_backend_pid() % ${STRIPES}`)
    const skuTaken = (sku: string) => new Conflict({ message: skuTakenMessage(sku) })
    const one = (statement: Effect.Effect<ReadonlyArray<ProductRow>, any>) =>
      orDie(statement).pipe(Effect.map(([row]) => (row === undefined ? undefined : toProduct(row))))

    const filtered = (accountId: string, filter: ProductFilter) =>
      sql.and([
        sql`p.account_id = ${accountId}::uuid`,
        ...(filter.active === undefined ? [] : [sql`p.active = ${filter.active}`]),
        ...(filter.sku === undefined ? [] : [sql`p.sku = ${filter.sku}`]),
        ...(filter.q === undefined
          ? []
          : [sql`(p.name ILIKE ${containsPattern(filter.q)} OR p.sku ILIKE ${containsPattern(filter.q)})`])
      ])

    /**
     * Every stripe of the moves' tracked products (merged: sorted by id, one per product), locked
     * in (product id, stripe) order with `COLLATE "C"`: every statement that locks stripes takes
     * them in that order, so none waits on another in a cycle. Read as locked: a concurrent
     * order's take, or a product that stopped being tracked and has none.
     */
    const lockAllStripes = (accountId: string, moves: ReadonlyArray<StockMove>) =>
      orDie(sql<{ product_id: string; stripe: number; stock: number; sku: string }>`
        SELECT t.product_id, t.stripe, t.stock, p.sku
        FROM product_stock AS t JOIN products AS p ON p.account_id = t.account_id AND p.id = t.product_id
        WHERE t.account_id = ${accountId}::uuid AND t.product_id = ANY(${textArray(moves.map((m) => m.productId))}::text[])
        ORDER BY t.product_id COLLATE "C", t.stripe
        FOR UPDATE OF t`)

    /** Adds each move to its product's stripe of this connection, the stripes locked in product order first. */
    const moveOwnStripes = (accountId: string, moves: ReadonlyArray<StockMove>, sign: 1 | -1, now: string) =>
      sql`UPDATE product_stock AS s
          SET stock = s.stock + ${sign}::int * l.quantity, moves = s.moves + 1, updated_at = ${now}::timestamptz
          FROM (SELECT t.product_id, t.stripe, m.quantity
                FROM product_stock AS t
                JOIN unnest(${textArray(moves.map((m) => m.productId))}::text[],
                            ${intArray(moves.map((m) => m.quantity))}::int[]) AS m(id, quantity) ON m.id = t.product_id
                WHERE t.account_id = ${accountId}::uuid AND t.stripe = ${ownStripe}
                ORDER BY t.product_id COLLATE "C"
                FOR UPDATE OF t) AS l
          WHERE s.account_id = ${accountId}::uuid AND s.product_id = l.product_id AND s.stripe = l.stripe`

    /** A newly tracked product's stripes, `stock` spread over them; `when` guards it (a product inserted by the same statement). */
    const insertStripes = (
      accountId: string,
      productId: string,
      stock: number,
      now: string,
      when: Statement.Fragment = sql`true`
    ) =>
      sql`INSERT INTO product_stock (account_id, product_id, stripe, stock, moves, updated_at)
          SELECT ${accountId}::uuid, ${productId}, v.stripe, v.stock, 0, ${now}::timestamptz
          FROM unnest(${STRIPE_NUMBERS}::int[], ${intArray(spread(stock))}::int[]) AS v(stripe, stock)
          WHERE ${when}`

    /** Sets every stripe of the products given (all locked by the caller) in one statement. */
    const setStripes = (
      accountId: string,
      rows: ReadonlyArray<{
        readonly productId: string
        readonly stripe: number
        readonly stock: number
        readonly moved: number
      }>,
      now: string
    ) =>
      orDie(sql`
        UPDATE product_stock AS s
        SET stock = v.stock, moves = s.moves + v.moved, updated_at = ${now}::timestamptz
        FROM unnest(${textArray(rows.map((r) => r.productId))}::text[], ${intArray(rows.map((r) => r.stripe))}::int[],
                    ${intArray(rows.map((r) => r.stock))}::int[], ${intArray(rows.map((r) => r.moved))}::int[])
             AS v(product_id, stripe, stock, moved)
        WHERE s.account_id = ${accountId}::uuid AND s.product_id = v.product_id AND s.stripe = v.stripe`).pipe(
        Effect.asVoid
      )

    const findOne = (accountId: string, id: string) =>
      one(sql<ProductRow>`SELECT ${readColumns} FROM products AS p ${stripesOfP}
                          WHERE p.account_id = ${accountId}::uuid AND p.id = ${id}`)

    return CatalogueRepo.of({
      insert: (accountId, p) =>
        // ON CONFLICT instead of catching the violation: a failed statement would poison the caller's transaction.
        orDie(sql<{ id: string }>`
          WITH product AS (
            INSERT INTO products (account_id, ${written})
            VALUES (${accountId}::uuid, ${p.id}, ${p.sku}, ${p.name}, ${p.description}, ${p.unit_amount}::bigint,
                    ${p.currency}, ${p.active}, ${p.image_url}, ${p.url},
                    ${JSON.stringify(p.attributes)}::jsonb, ${p.version}::int, ${p.created_at}::timestamptz,
                    ${p.updated_at}::timestamptz)
            ON CONFLICT (account_id, sku) DO NOTHING
            RETURNING account_id, id
          )${p.stock === null ? sql`` : sql`, stripes AS (${insertStripes(accountId, p.id, p.stock, p.updated_at, sql`EXISTS (SELECT 1 FROM product)`)})`}
          SELECT id FROM product`).pipe(
          Effect.flatMap((rows) => (rows.length > 0 ? Effect.void : Effect.fail(skuTaken(p.sku))))
        ),
      list: (accountId, filter, page) => {
        const where = filtered(accountId, filter)
        return orDie(
          Effect.all(
            [
              sql<ProductRow>`SELECT ${readColumns} FROM products AS p ${stripesOfP} WHERE ${where}
                              ORDER BY p.created_at DESC, p.id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`,
              sql<{ total: number }>`SELECT count(*)::int AS total FROM products AS p WHERE ${where}`
            ],
            { concurrency: "unbounded" }
          )
        ).pipe(Effect.map(([rows, [count]]) => ({ items: rows.map(toProduct), total: count?.total ?? 0 })))
      },
      find: findOne,
      findForUpdate: (accountId, id) =>
        // The stripes first, so no order moves the stock (or the version with it) until this unit ends; then
        // the product's row, read after the wait. NO KEY: an order's foreign keys do not wait on it.
        Effect.andThen(
          orDie(sql`SELECT stripe FROM product_stock WHERE account_id = ${accountId}::uuid AND product_id = ${id}
                    ORDER BY stripe FOR UPDATE`),
          one(
            sql<ProductRow>`SELECT ${readColumns} FROM products AS p ${stripesOfP}
                            WHERE p.account_id = ${accountId}::uuid AND p.id = ${id}
                            FOR NO KEY UPDATE OF p`
          )
        ),
      findMany: (accountId, keys) =>
        keys.ids.length === 0 && keys.skus.length === 0
          ? Effect.succeed([])
          : // Arrays as literals: the planner probes the primary key and the SKU index for each value.
            orDie(
              read(sql<ProductRow>`
                SELECT ${readColumns} FROM products AS p ${stripesOfP}
                WHERE p.account_id = ${accountId}::uuid
                  AND (p.id = ANY(${textArray(keys.ids)}::text[]) OR p.sku = ANY(${textArray(keys.skus)}::text[]))`)
            ).pipe(Effect.map((rows) => rows.map(toProduct))),
      update: (accountId, p) =>
        Effect.gen(function* () {
          // Checked first rather than caught: a failed statement would poison the caller's transaction.
          const holder = yield* orDie(
            sql<{ id: string }>`SELECT id FROM products
                                WHERE account_id = ${accountId}::uuid AND sku = ${p.sku} AND id <> ${p.id}`
          )
          if (holder.length > 0) return yield* skuTaken(p.sku)
          // The caller read the product with `findForUpdate`: its stripes are locked, their moves fixed.
          const [stripes] = yield* orDie(
            sql<{ stock: number | null; moves: number | null }>`
              SELECT sum(stock)::int AS stock, sum(moves)::int AS moves FROM product_stock
              WHERE account_id = ${accountId}::uuid AND product_id = ${p.id}`
          )
          const tracked = stripes?.stock !== null && stripes?.stock !== undefined
          const moves = tracked ? Number(stripes!.moves) : 0
          // The version read is the row's own plus the stock's moves, which stay: the row keeps the difference.
          const updated = yield* sql<{ id: string }>`
            UPDATE products SET sku = ${p.sku}, name = ${p.name}, description = ${p.description},
              unit_amount = ${p.unit_amount}::bigint, currency = ${p.currency},
              active = ${p.active}, image_url = ${p.image_url}, url = ${p.url},
              attributes = ${JSON.stringify(p.attributes)}::jsonb, version = ${p.version - (p.stock === null ? 0 : moves)}::int,
              updated_at = ${p.updated_at}::timestamptz
            WHERE account_id = ${accountId}::uuid AND id = ${p.id}
            RETURNING id`.pipe(
            // A concurrent writer may take the SKU between the check and the write.
            Effect.catchIf(
              (error) => error.reason._tag === "UniqueViolation",
              () => Effect.fail(skuTaken(p.sku))
            ),
            Effect.catchTag("SqlError", (error) => orDie(Effect.fail(error)))
          )
          if (updated.length === 0) return undefined
          if (p.stock === null) {
            if (tracked) {
              yield* orDie(
                sql`DELETE FROM product_stock WHERE account_id = ${accountId}::uuid AND product_id = ${p.id}`
              )
            }
          } else if (!tracked) {
            yield* orDie(insertStripes(accountId, p.id, p.stock, p.updated_at))
          } else if (Number(stripes!.stock) !== p.stock) {
            yield* setStripes(
              accountId,
              spread(p.stock).map((stock, stripe) => ({ productId: p.id, stripe, stock, moved: 0 })),
              p.updated_at
            )
          }
          return yield* findOne(accountId, p.id)
        }),
      remove: (accountId, id) =>
        // Read as it was, stripes and all (the statement's snapshot), then deleted; its stripes go with it.
        one(
          sql<ProductRow>`WITH p AS (DELETE FROM products WHERE account_id = ${accountId}::uuid AND id = ${id} RETURNING *)
                          SELECT ${readColumns} FROM p ${stripesOfP}`
        ),
      takeStock: (accountId, moves, now) =>
        Effect.gen(function* () {
          const wanted = merged(moves)
          if (wanted.length === 0) return
          if (yield* mayPresume) {
            // Enough stock presumed in this connection's stripe (UnitOfWork.ts): the units are taken with
            // the unit's end, the stripes locked in product order; a stripe short of them breaks
            // `stock >= 0` and the unit runs again, asking as below. Orders for the product wait on each
            // other only where their connections share a stripe, and the unit frees it as its statement
            // ends, before the commit's flush.
            yield* releaseLocksBeforeFlush
            return yield* presume(moveOwnStripes(accountId, wanted, -1, now))
          }
          // Asking: every stripe of the tracked products locked in order and summed; if each has enough,
          // the units are taken and what is left is spread over the stripes again (so the stripes that
          // ran dry serve their connections' next orders without asking).
          const stripes = yield* lockAllStripes(accountId, wanted)
          if (stripes.length === 0) return
          const byProduct = new Map<string, { sku: string; stock: number }>()
          for (const row of stripes) {
            const product = byProduct.get(row.product_id) ?? { sku: row.sku, stock: 0 }
            product.stock += Number(row.stock)
            byProduct.set(row.product_id, product)
          }
          for (const move of wanted) {
            const product = byProduct.get(move.productId)
            if (product !== undefined && product.stock < move.quantity) {
              return yield* new InsufficientStock({
                sku: product.sku,
                available: product.stock,
                requested: move.quantity
              })
            }
          }
          yield* setStripes(
            accountId,
            wanted.flatMap((move) => {
              const product = byProduct.get(move.productId)
              if (product === undefined) return []
              // One move per product and order, as on the fast path: it counts once in the product's version.
              return spread(product.stock - move.quantity).map((stock, stripe) => ({
                productId: move.productId,
                stripe,
                stock,
                moved: stripe === 0 ? 1 : 0
              }))
            }),
            now
          )
        }),
      returnStock: (accountId, moves, now) =>
        Effect.gen(function* () {
          const wanted = merged(moves)
          if (wanted.length === 0) return
          // Given back to this connection's stripe; untracked products have none and are left alone.
          yield* orDie(moveOwnStripes(accountId, wanted, 1, now))
        })
    })
  })
)

/**
 * An order's inputs in one statement (core's `OrderInputs`): whether its lead is in the account,
 * and the products it names, as `findMany` reads them. A plain read: before the order's writes.
 */
export const orderInputsLayer = Layer.effect(
  OrderInputs,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const readColumns = sql.unsafe(READ)
    const stripesOfP = sql.unsafe(STRIPES_OF_P)
    return OrderInputs.of({
      find: (accountId, leadId, keys) =>
        orDie(
          read(sql<{ lead_found: boolean } & { [K in keyof ProductRow]: ProductRow[K] | null }>`
            SELECT EXISTS (SELECT 1 FROM leads WHERE account_id = ${accountId}::uuid AND id = ${leadId}) AS lead_found, named.*
            FROM (SELECT 1) AS one LEFT JOIN LATERAL (
              SELECT ${readColumns} FROM products AS p ${stripesOfP}
              WHERE p.account_id = ${accountId}::uuid
                AND (p.id = ANY(${textArray(keys.ids)}::text[]) OR p.sku = ANY(${textArray(keys.skus)}::text[]))
            ) AS named ON true`)
        ).pipe(
          Effect.map((rows) => ({
            leadFound: rows[0]?.lead_found === true,
            products: rows.flatMap((row) => (row.id === null ? [] : [toProduct(row as ProductRow)]))
          }))
        )
    })
  })
)
