import { Context, Effect, Layer, Option } from "effect"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import { CatalogueRepo } from "../catalogue/CatalogueRepo.ts"
import {
  type Conflict,
  decodeInput,
  type InsufficientStock,
  invalidField,
  type InvalidInput,
  InvalidTransition,
  NotFound,
  type PermissionDenied,
  type PreconditionFailed
} from "../Errors.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import * as Ids from "../Ids.ts"
import * as Pagination from "../Pagination.ts"
import * as Tracing from "../Tracing.ts"
import { FinalWrites, Transactor } from "../Transactor.ts"
import * as Versioned from "../Versioned.ts"
import { CreateOrder, type Order, type OrderFilter, UpdateOrder } from "./Order.ts"
import * as OrderEvents from "./OrderEvents.ts"
import { OrderInputs } from "./OrderInputs.ts"
import { OrderNotices } from "./OrderNotices.ts"
import * as OrderPricing from "./OrderPricing.ts"
import * as OrderState from "./OrderState.ts"
import { OrdersRepo } from "./OrdersRepo.ts"

type Needs = CurrentPrincipal

/** How an order came to be: the API, or a WhatsApp `order` message (its wamid). */
export type Origin = { readonly source: "api" } | { readonly source: "whatsapp"; readonly wamid: string }

/**
 * Orders (docs/contract-commerce-ai.md §3): made with their lines priced by the server and their stock
 * taken in the same transaction, then moved through `status` and `payment_status`, each move
 * checked on the row as locked, with `If-Match` for optimistic concurrency. Never deleted.
 */
export class Orders extends Context.Service<
  Orders,
  {
    readonly list: (
      filter: OrderFilter,
      page: Pagination.Page
    ) => Effect.Effect<{ orders: ReadonlyArray<Order>; meta: Pagination.Meta }, PermissionDenied | InvalidInput, Needs>
    readonly get: (id: string) => Effect.Effect<Order, PermissionDenied | NotFound, Needs>
    /**
     * `InsufficientStock` comes after the order's writes, which its transaction's rollback undoes: a
     * caller that runs this inside a transaction of its own must not commit that one after it. A
     * caller that provides `FinalWrites` (the idempotency of a create) gets the stock taken as its
     * final write instead, and the refusal from there.
     */
    readonly create: (
      input: CreateOrder,
      origin?: Origin
    ) => Effect.Effect<Order, PermissionDenied | InvalidInput | InsufficientStock | Conflict, Needs>
    /** `ifMatch` is the request's `If-Match`: the write applies only to the version it names. */
    readonly update: (
      id: string,
      input: UpdateOrder,
      ifMatch?: string | undefined
    ) => Effect.Effect<
      Order,
      PermissionDenied | NotFound | InvalidInput | InvalidTransition | PreconditionFailed,
      Needs
    >
  }
>()("core/Orders") {
  static readonly layer: Layer.Layer<
    Orders,
    never,
    OrdersRepo | CatalogueRepo | OrderInputs | Transactor | Outbox | OrderNotices
  > = Layer.effect(
    Orders,
    Effect.gen(function* () {
      const repo = yield* OrdersRepo
      const products = yield* CatalogueRepo
      const inputs = yield* OrderInputs
      const transactor = yield* Transactor
      const outbox = yield* Outbox
      const notices = yield* OrderNotices
      const withOutbox = Effect.provideService(Outbox, outbox)
      const notFound = (id: string) => new NotFound({ resource: "order", id })
      const decodeCreate = decodeInput(CreateOrder, "order")
      const decodeUpdate = decodeInput(UpdateOrder, "order")

      const instant = (field: "created_after" | "created_before", value: string | undefined) => {
        if (value === undefined) return Effect.succeed(undefined)
        const millis = Date.parse(value)
        return Number.isNaN(millis)
          ? Effect.fail(invalidField(field, "must be an ISO 8601 time", "query"))
          : Effect.succeed(new Date(millis).toISOString())
      }

      const list = Effect.fnUntraced(function* (filter: OrderFilter, page: Pagination.Page) {
        const principal = yield* authorize("orders.view")
        const normalised: OrderFilter = {
          ...filter,
          created_after: yield* instant("created_after", filter.created_after),
          created_before: yield* instant("created_before", filter.created_before)
        }
        const slice = yield* repo.list(principal.accountId, normalised, page)
        return { orders: slice.items, meta: Pagination.meta(page, slice.total) }
      }, Tracing.span("Orders.list"))

      const get = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("orders.view")
        return (yield* repo.find(principal.accountId, id)) ?? (yield* notFound(id))
      }, Tracing.span("Orders.get"))

      const create = Effect.fnUntraced(function* (raw: CreateOrder, origin: Origin = { source: "api" }) {
        const principal = yield* authorize("orders.create")
        const input = yield* decodeCreate(raw)
        const accountId = principal.accountId
        const found = yield* inputs.find(accountId, input.lead_id, {
          ids: input.items.flatMap((line) => (line.product_id === undefined ? [] : [line.product_id])),
          skus: input.items.flatMap((line) => (line.sku === undefined ? [] : [line.sku]))
        })
        if (!found.leadFound) return yield* invalidField("lead_id", "no such lead in this account")
        const priced = yield* OrderPricing.price(input, found.products)
        const now = yield* Ids.now
        const items = []
        for (const item of priced.items) items.push({ id: yield* Ids.make("li"), ...item })
        const order: Order = {
          id: yield* Ids.make("ord"),
          lead_id: input.lead_id,
          status: "pending",
          payment_status: "unpaid",
          currency: priced.currency,
          items,
          amount_subtotal: priced.amount_subtotal,
          amount_shipping: priced.amount_shipping,
          amount_discount: priced.amount_discount,
          amount_total: priced.amount_total,
          note: input.note ?? null,
          tracking: null,
          source: origin.source,
          whatsapp_message_id: origin.source === "whatsapp" ? origin.wamid : null,
          metadata: input.metadata ?? {},
          version: 1,
          created_at: now,
          updated_at: now,
          confirmed_at: null,
          shipped_at: null,
          delivered_at: null,
          cancelled_at: null,
          paid_at: null,
          refunded_at: null
        }
        const finalWrites = yield* Effect.serviceOption(FinalWrites)
        return yield* transactor.withTransaction(
          Effect.gen(function* () {
            yield* repo.insert(accountId, order)
            yield* emit(OrderEvents.created, order).pipe(withOutbox)
            // Last, so that a product's row is locked from here to the commit only: every other order
            // for that product waits on it. Under an Idempotency-Key, after the key's record too (the
            // caller's final write). A short product fails the order after its writes, and the
            // transaction's rollback takes them back.
            const take = products.takeStock(accountId, priced.moves, now)
            if (Option.isSome(finalWrites) && priced.moves.length > 0) yield* finalWrites.value.defer(take)
            else yield* take
            return order
          })
        )
      }, Tracing.span("Orders.create"))

      const update = Effect.fnUntraced(function* (id: string, raw: UpdateOrder, ifMatch?: string) {
        const principal = yield* authorize("orders.update")
        const input = yield* decodeUpdate(raw)
        const accountId = principal.accountId
        return yield* transactor.withTransaction(
          Effect.gen(function* () {
            const current = yield* repo.findForUpdate(accountId, id)
            if (current === undefined) return yield* notFound(id)
            yield* Versioned.checkIfMatch(ifMatch, current.version)
            const now = yield* Ids.now
            const next = yield* moved(current, input, now)
            const advanced = Versioned.advance(current, next, now)
            if (advanced === current) return current
            // The notice (usage counters, then its conversation) before the stock, the order every
            // transaction takes them in: a webhook revives a send (usage), stores a customer's
            // message (conversation), then places their cart (stock). Stock first deadlocked with it
            // (found by the soak, bench/SOAK.md; docs/performance.md, "The usage counters, then
            // conversations, then stock").
            if (advanced.status !== current.status) yield* notices.statusMoved(accountId, principal.userId, advanced)
            if (OrderState.returnsStock(current.status, advanced.status)) {
              yield* products.returnStock(accountId, stockOf(current), now)
            }
            yield* repo.update(accountId, advanced)
            if (advanced.status !== current.status || advanced.payment_status !== current.payment_status) {
              yield* emit(OrderEvents.statusChanged, advanced, Versioned.previousAttributes(current, advanced)).pipe(
                withOutbox
              )
            }
            return advanced
          })
        )
      }, Tracing.span("Orders.update"))

      return Orders.of({ list, get, create, update })
    })
  )
}

/** What an order took from its products, given back when it is cancelled before it ships. */
const stockOf = (order: Order) =>
  order.items.flatMap((item) =>
    item.product_id === null ? [] : [{ productId: item.product_id, quantity: item.quantity }]
  )

/**
 * The order after a PATCH, before its version moves: each machine checked (payment against the
 * status the same PATCH leaves), each move stamped with `now`; the plain fields as given.
 */
export const moved = (current: Order, input: UpdateOrder, now: string): Effect.Effect<Order, InvalidTransition> =>
  Effect.suspend(() => {
    let next: Order = { ...current }
    if (input.status !== undefined && input.status !== current.status) {
      if (!OrderState.canMoveStatus(current.status, input.status)) {
        return Effect.fail(
          new InvalidTransition({
            field: "status",
            from: current.status,
            to: input.status,
            allowed: OrderState.nextStatuses(current.status)
          })
        )
      }
      const stamp = OrderState.stampOf[input.status]
      next = { ...next, status: input.status, ...(stamp === undefined ? {} : { [stamp]: now }) }
    }
    if (input.payment_status !== undefined && input.payment_status !== current.payment_status) {
      if (!OrderState.canMovePayment(current.payment_status, input.payment_status, next.status)) {
        return Effect.fail(
          new InvalidTransition({
            field: "payment_status",
            from: current.payment_status,
            to: input.payment_status,
            allowed: OrderState.nextPayments(current.payment_status, next.status)
          })
        )
      }
      const stamp = OrderState.paymentStampOf[input.payment_status]
      next = { ...next, payment_status: input.payment_status, ...(stamp === undefined ? {} : { [stamp]: now }) }
    }
    if (input.note !== undefined) next = { ...next, note: input.note }
    if (input.metadata !== undefined) next = { ...next, metadata: input.metadata }
    if (input.tracking !== undefined) {
      next = {
        ...next,
        tracking:
          input.tracking === null
            ? null
            : {
                carrier: input.tracking.carrier ?? null,
                number: input.tracking.number ?? null,
                url: input.tracking.url ?? null
              }
      }
    }
    return Effect.succeed(next)
  })
