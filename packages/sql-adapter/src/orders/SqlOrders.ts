import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Conflict } from "@leadline/core/Errors"
import type { Order, OrderFilter, OrderItem } from "@leadline/core/orders/Order"
import { OrdersRepo } from "@leadline/core/orders/OrdersRepo"
import * as Tallies from "../internal/tallies.ts"
import { iso, isoOrNull, json, orDie } from "../internal/store.ts"
import { mayPresume, presume } from "../UnitOfWork.ts"

interface OrderRow {
  readonly id: string
  readonly lead_id: string
  readonly status: Order["status"]
  readonly payment_status: Order["payment_status"]
  readonly currency: string
  readonly items: unknown
  readonly amount_subtotal: unknown
  readonly amount_shipping: unknown
  readonly amount_discount: unknown
  readonly amount_total: unknown
  readonly note: string | null
  readonly tracking: unknown
  readonly source: Order["source"]
  readonly whatsapp_message_id: string | null
  readonly metadata: unknown
  readonly version: unknown
  readonly created_at: unknown
  readonly updated_at: unknown
  readonly confirmed_at: unknown
  readonly shipped_at: unknown
  readonly delivered_at: unknown
  readonly cancelled_at: unknown
  readonly paid_at: unknown
  readonly refunded_at: unknown
}

// jsonb keeps its keys in its own order: the lines and the tracking are rebuilt in the schema's.
const toItem = (item: OrderItem): OrderItem => ({
  id: item.id,
  product_id: item.product_id,
  sku: item.sku,
  name: item.name,
  unit_amount: item.unit_amount,
  quantity: item.quantity,
  amount_total: item.amount_total
})

const toTracking = (value: unknown): Order["tracking"] => {
  if (value === null || value === undefined) return null
  const tracking = json<NonNullable<Order["tracking"]>>(value)
  return { carrier: tracking.carrier, number: tracking.number, url: tracking.url }
}

// Amounts are bigint, which the pg driver gives as strings: Number() them.
const toOrder = (row: OrderRow): Order => ({
  id: row.id,
  lead_id: row.lead_id,
  status: row.status,
  payment_status: row.payment_status,
  currency: row.currency,
  items: json<ReadonlyArray<OrderItem>>(row.items).map(toItem),
  amount_subtotal: Number(row.amount_subtotal),
  amount_shipping: Number(row.amount_shipping),
  amount_discount: Number(row.amount_discount),
  amount_total: Number(row.amount_total),
  note: row.note,
  tracking: toTracking(row.tracking),
  source: row.source,
  whatsapp_message_id: row.whatsapp_message_id,
  metadata: json<Record<string, unknown>>(row.metadata),
  version: Number(row.version),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
  confirmed_at: isoOrNull(row.confirmed_at),
  shipped_at: isoOrNull(row.shipped_at),
  delivered_at: isoOrNull(row.delivered_at),
  cancelled_at: isoOrNull(row.cancelled_at),
  paid_at: isoOrNull(row.paid_at),
  refunded_at: isoOrNull(row.refunded_at)
})

const COLUMNS = `id, lead_id, status, payment_status, currency, items, amount_subtotal, amount_shipping,
  amount_discount, amount_total, note, tracking, source, whatsapp_message_id, metadata, version, created_at,
  updated_at, confirmed_at, shipped_at, delivered_at, cancelled_at, paid_at, refunded_at`

export const layer = Layer.effect(
  OrdersRepo,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.unsafe(COLUMNS)
    const one = (statement: Effect.Effect<ReadonlyArray<OrderRow>, any>) =>
      orDie(statement).pipe(Effect.map(([row]) => (row === undefined ? undefined : toOrder(row))))
    const jsonOrNull = (value: unknown) => (value === null ? null : JSON.stringify(value))

    const filtered = (accountId: string, filter: OrderFilter) =>
      sql.and([
        sql`account_id = ${accountId}::uuid`,
        ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
        ...(filter.payment_status === undefined ? [] : [sql`payment_status = ${filter.payment_status}`]),
        ...(filter.lead_id === undefined ? [] : [sql`lead_id = ${filter.lead_id}`]),
        ...(filter.created_after === undefined ? [] : [sql`created_at >= ${filter.created_after}::timestamptz`]),
        ...(filter.created_before === undefined ? [] : [sql`created_at < ${filter.created_before}::timestamptz`])
      ])

    return OrdersRepo.of({
      countPerBucket: (accountId, moment, bounds) => Tallies.perBucket(sql, accountId, `orders_${moment}`, bounds),
      revenuePerBucket: (accountId, currency, bounds) =>
        Tallies.perBucket(sql, accountId, `revenue:${currency}`, bounds),
      revenue: (accountId, window) =>
        Effect.map(
          Effect.all([
            Tallies.byPrefix(sql, accountId, "revenue:", window),
            Tallies.byPrefix(sql, accountId, "paid_orders:", window)
          ]),
          ([amounts, counts]) =>
            [...counts]
              .sort(([a], [b]) => (a < b ? -1 : 1))
              .map(([currency, orders]) => ({ currency, amount: amounts.get(currency) ?? 0, orders }))
        ),
      insert: (accountId, o) => {
        const values = sql`(${accountId}::uuid, ${o.id}, ${o.lead_id}, ${o.status}, ${o.payment_status}, ${o.currency},
                  ${JSON.stringify(o.items)}::jsonb, ${o.amount_subtotal}::bigint, ${o.amount_shipping}::bigint,
                  ${o.amount_discount}::bigint, ${o.amount_total}::bigint, ${o.note}, ${jsonOrNull(o.tracking)}::jsonb,
                  ${o.source}, ${o.whatsapp_message_id}, ${JSON.stringify(o.metadata)}::jsonb, ${o.version}::int,
                  ${o.created_at}::timestamptz, ${o.updated_at}::timestamptz, ${o.confirmed_at}::timestamptz,
                  ${o.shipped_at}::timestamptz, ${o.delivered_at}::timestamptz, ${o.cancelled_at}::timestamptz,
                  ${o.paid_at}::timestamptz, ${o.refunded_at}::timestamptz)`
        return Effect.flatMap(mayPresume, (presuming) =>
          presuming
            ? // A WhatsApp message presumed not to have placed an order yet (UnitOfWork.ts): a repeat
              // breaks the wamid index at the unit's end, and the unit runs again, asking as below.
              presume(sql`INSERT INTO orders (account_id, ${columns}) VALUES ${values}`)
            : // ON CONFLICT on the wamid index only (a repeated id is still an error), instead of catching
              // the violation: a failed statement would poison the transaction that took the stock.
              orDie(sql<{ id: string }>`
                INSERT INTO orders (account_id, ${columns}) VALUES ${values}
                ON CONFLICT (account_id, whatsapp_message_id) WHERE whatsapp_message_id IS NOT NULL DO NOTHING
                RETURNING id`).pipe(
                Effect.flatMap((rows) =>
                  rows.length > 0
                    ? Effect.void
                    : Effect.fail(new Conflict({ message: "This WhatsApp message placed an order already" }))
                )
              )
        )
      },
      list: (accountId, filter, page) => {
        const where = filtered(accountId, filter)
        return orDie(
          Effect.all(
            [
              sql<OrderRow>`SELECT ${columns} FROM orders WHERE ${where}
                            ORDER BY created_at DESC, id DESC LIMIT ${page.limit}::int OFFSET ${page.offset}::int`,
              sql<{ total: number }>`SELECT count(*)::int AS total FROM orders WHERE ${where}`
            ],
            { concurrency: "unbounded" }
          )
        ).pipe(Effect.map(([rows, [count]]) => ({ items: rows.map(toOrder), total: count?.total ?? 0 })))
      },
      find: (accountId, id) =>
        one(sql<OrderRow>`SELECT ${columns} FROM orders WHERE account_id = ${accountId}::uuid AND id = ${id}`),
      findForUpdate: (accountId, id) =>
        one(
          sql<OrderRow>`SELECT ${columns} FROM orders WHERE account_id = ${accountId}::uuid AND id = ${id} FOR UPDATE`
        ),
      findByWhatsAppMessage: (accountId, wamid) =>
        one(
          sql<OrderRow>`SELECT ${columns} FROM orders
                        WHERE account_id = ${accountId}::uuid AND whatsapp_message_id = ${wamid}`
        ),
      // The lines, amounts, source and wamid are fixed when the order is placed: only the rest is written.
      update: (accountId, o) =>
        orDie(sql`
          UPDATE orders SET status = ${o.status}, payment_status = ${o.payment_status}, note = ${o.note},
            tracking = ${jsonOrNull(o.tracking)}::jsonb, metadata = ${JSON.stringify(o.metadata)}::jsonb,
            version = ${o.version}::int, updated_at = ${o.updated_at}::timestamptz,
            confirmed_at = ${o.confirmed_at}::timestamptz, shipped_at = ${o.shipped_at}::timestamptz,
            delivered_at = ${o.delivered_at}::timestamptz, cancelled_at = ${o.cancelled_at}::timestamptz,
            paid_at = ${o.paid_at}::timestamptz, refunded_at = ${o.refunded_at}::timestamptz
          WHERE account_id = ${accountId}::uuid AND id = ${o.id}`).pipe(Effect.asVoid)
    })
  })
)
