import { assert, describe, it } from "@effect/vitest"
import type { Order } from "../../src/orders/Order.ts"
import { noticeOf, WHATSAPP_STATUS } from "../../src/orders/OrderNotices.ts"

const order = (status: Order["status"]) => ({ id: "ord_01", status }) as Order

describe("order status notices", () => {
  it("names each status as WhatsApp's order_status does (docs/contract-commerce-ai.md §3)", () => {
    assert.deepStrictEqual(WHATSAPP_STATUS, {
      pending: "pending",
      confirmed: "processing",
      shipped: "shipped",
      delivered: "completed",
      cancelled: "canceled"
    })
  })

  it("is a text without a template, and the template with the order's id and status as its body otherwise", () => {
    assert.deepStrictEqual(noticeOf(order("delivered"), { enabled: true, template: null }), {
      type: "text",
      text: "Your order ord_01 is now completed."
    })
    assert.deepStrictEqual(
      noticeOf(order("confirmed"), { enabled: true, template: { name: "order_update", language: "es" } }),
      {
        type: "template",
        template: {
          name: "order_update",
          language: "es",
          components: [
            {
              type: "body",
              parameters: [
                { type: "text", text: "ord_01" },
                { type: "text", text: "processing" }
              ]
            }
          ]
        }
      }
    )
  })
})
