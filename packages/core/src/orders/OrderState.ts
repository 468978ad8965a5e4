import type { OrderStatus, PaymentStatus } from "./Order.ts"

/**
 * The two machines of an order (docs/contract-commerce-ai.md §3):
 *
 * ```
 * status:          pending ──► confirmed ──► shipped ──► delivered      (skipping allowed)
 *                     └────────────┴────────────┴──► cancelled
 * payment_status:  unpaid ──(not cancelled)──► paid ──► refunded
 * ```
 *
 * `delivered`, `cancelled` and `refunded` are final.
 */

const FORWARD: ReadonlyArray<OrderStatus> = ["pending", "confirmed", "shipped", "delivered"]

/** Where an order in `from` may go next, in order. */
export const nextStatuses = (from: OrderStatus): ReadonlyArray<OrderStatus> =>
  from === "delivered" || from === "cancelled" ? [] : [...FORWARD.slice(FORWARD.indexOf(from) + 1), "cancelled"]

/** Where a payment in `from` may go next, given the order's status (after the same change). */
export const nextPayments = (from: PaymentStatus, status: OrderStatus): ReadonlyArray<PaymentStatus> =>
  from === "unpaid" ? (status === "cancelled" ? [] : ["paid"]) : from === "paid" ? ["refunded"] : []

export const canMoveStatus = (from: OrderStatus, to: OrderStatus): boolean => nextStatuses(from).includes(to)

export const canMovePayment = (from: PaymentStatus, to: PaymentStatus, status: OrderStatus): boolean =>
  nextPayments(from, status).includes(to)

/** Cancelling gives the stock back only while the goods have not left: from pending or confirmed. */
export const returnsStock = (from: OrderStatus, to: OrderStatus): boolean =>
  to === "cancelled" && (from === "pending" || from === "confirmed")

/** The field each status stamps when an order moves into it. */
export const stampOf = {
  pending: undefined,
  confirmed: "confirmed_at",
  shipped: "shipped_at",
  delivered: "delivered_at",
  cancelled: "cancelled_at"
} as const satisfies Record<OrderStatus, string | undefined>

export const paymentStampOf = {
  unpaid: undefined,
  paid: "paid_at",
  refunded: "refunded_at"
} as const satisfies Record<PaymentStatus, string | undefined>
