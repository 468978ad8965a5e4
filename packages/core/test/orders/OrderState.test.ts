import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import type { Order, OrderStatus, PaymentStatus } from "../../src/orders/Order.ts"
import { moved } from "../../src/orders/Orders.ts"
import * as OrderState from "../../src/orders/OrderState.ts"

const STATUSES: ReadonlyArray<OrderStatus> = ["pending", "confirmed", "shipped", "delivered", "cancelled"]
const PAYMENTS: ReadonlyArray<PaymentStatus> = ["unpaid", "paid", "refunded"]

// docs/contract-commerce-ai.md §3, written out cell by cell rather than computed.
const STATUS_TABLE: Record<OrderStatus, ReadonlyArray<OrderStatus>> = {
  pending: ["confirmed", "shipped", "delivered", "cancelled"],
  confirmed: ["shipped", "delivered", "cancelled"],
  shipped: ["delivered", "cancelled"],
  delivered: [],
  cancelled: []
}

const order = (status: OrderStatus, payment_status: PaymentStatus): Order => ({
  id: "ord_1",
  lead_id: "ld_1",
  status,
  payment_status,
  currency: "EUR",
  items: [],
  amount_subtotal: 0,
  amount_shipping: 0,
  amount_discount: 0,
  amount_total: 0,
  note: null,
  tracking: null,
  source: "api",
  whatsapp_message_id: null,
  metadata: {},
  version: 1,
  created_at: "t0",
  updated_at: "t0",
  confirmed_at: null,
  shipped_at: null,
  delivered_at: null,
  cancelled_at: null,
  paid_at: null,
  refunded_at: null
})

describe("the status machine", () => {
  for (const from of STATUSES) {
    for (const to of STATUSES.filter((s) => s !== from)) {
      const legal = STATUS_TABLE[from].includes(to)
      it(`${from} → ${to}: ${legal ? "allowed" : "refused"}`, () => {
        assert.strictEqual(OrderState.canMoveStatus(from, to), legal)
        const exit = Effect.runSyncExit(moved(order(from, "unpaid"), { status: to }, "t1"))
        if (legal) {
          assert.isTrue(Exit.isSuccess(exit))
          const after = Exit.isSuccess(exit) ? exit.value : undefined
          assert.strictEqual(after?.status, to)
          const stamp = OrderState.stampOf[to]
          if (stamp !== undefined) assert.strictEqual(after?.[stamp], "t1")
        } else {
          assert.isTrue(Exit.isFailure(exit))
          const error = Effect.runSync(Effect.flip(moved(order(from, "unpaid"), { status: to }, "t1")))
          assert.deepStrictEqual(
            { field: error.field, from: error.from, to: error.to, allowed: error.allowed },
            { field: "status", from, to, allowed: STATUS_TABLE[from] }
          )
        }
      })
    }
  }

  it("gives stock back on a cancel from pending or confirmed only", () => {
    assert.deepStrictEqual(
      STATUSES.filter((from) => OrderState.returnsStock(from, "cancelled")),
      ["pending", "confirmed"]
    )
    assert.isFalse(OrderState.returnsStock("pending", "delivered"))
  })
})

describe("the payment machine", () => {
  const cases: ReadonlyArray<readonly [PaymentStatus, PaymentStatus, OrderStatus, boolean]> = [
    ["unpaid", "paid", "pending", true],
    ["unpaid", "paid", "delivered", true],
    ["unpaid", "paid", "cancelled", false],
    ["unpaid", "refunded", "pending", false],
    ["paid", "refunded", "pending", true],
    ["paid", "refunded", "cancelled", true],
    ["paid", "unpaid", "pending", false],
    ["refunded", "paid", "pending", false],
    ["refunded", "unpaid", "delivered", false]
  ]
  for (const [from, to, status, legal] of cases) {
    it(`${from} → ${to} on a ${status} order: ${legal ? "allowed" : "refused"}`, () => {
      assert.strictEqual(OrderState.canMovePayment(from, to, status), legal)
      const exit = Effect.runSyncExit(moved(order(status, from), { payment_status: to }, "t1"))
      assert.strictEqual(Exit.isSuccess(exit), legal)
    })
  }

  it("checks a payment against the status the same change leaves: cancel and pay at once is refused", () => {
    const error = Effect.runSync(
      Effect.flip(moved(order("pending", "unpaid"), { status: "cancelled", payment_status: "paid" }, "t1"))
    )
    assert.deepStrictEqual([error.field, error.allowed], ["payment_status", []])
    const both = Effect.runSync(
      moved(order("pending", "unpaid"), { status: "delivered", payment_status: "paid" }, "t1")
    )
    assert.deepStrictEqual(
      [both.status, both.delivered_at, both.payment_status, both.paid_at],
      ["delivered", "t1", "paid", "t1"]
    )
  })

  it("stays put for the same status, and a refund keeps paid_at", () => {
    const same = Effect.runSync(moved(order("shipped", "paid"), { status: "shipped", payment_status: "paid" }, "t1"))
    assert.deepStrictEqual(same, order("shipped", "paid"))
    const refunded = Effect.runSync(
      moved({ ...order("delivered", "paid"), paid_at: "t0" }, { payment_status: "refunded" }, "t1")
    )
    assert.deepStrictEqual([refunded.paid_at, refunded.refunded_at], ["t0", "t1"])
  })
})

describe("all payment states are reachable from unpaid", () => {
  it("unpaid → paid → refunded", () => {
    assert.deepStrictEqual(
      PAYMENTS.map((p) => OrderState.nextPayments(p, "pending")),
      [["paid"], ["refunded"], []]
    )
  })
})
