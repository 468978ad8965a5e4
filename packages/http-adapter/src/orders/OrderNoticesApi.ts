import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ConfigureOrderNotices, OrderNoticeSettings } from "@leadline/core/orders/OrderNotices"
import { Authentication } from "../Authentication.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Forbidden, ValidationError } from "../WireErrors.ts"

const WHAT =
  "When on, every change of an order's `status` queues one WhatsApp message to the order's lead, in the change's transaction and through the same sender as any message (it counts against the plan): the account's template, with body parameters {{1}} the order's id and {{2}} its status as WhatsApp's `order_status` names it (pending, processing, shipped, completed, canceled), or without a template the text `Your order <id> is now <status>.`, which WhatsApp accepts only within 24 hours of the lead's last message. It goes to the lead's most recent conversation on an active channel; a lead with none, a text outside the window or a plan at its limit gets no message, and the status still moves."

export class OrderNoticesApi extends HttpApiGroup.make("orderNotices")
  .add(
    HttpApiEndpoint.get("get", "/", {
      success: OrderNoticeSettings,
      error: [Forbidden]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Get the order status notices setting",
        description: `Off (\`{"enabled": false, "template": null}\`) until set. ${WHAT} Needs \`orders:read\` or \`orders:write\`.`
      })
    ),
    HttpApiEndpoint.patch("update", "/", {
      payload: ConfigureOrderNotices,
      success: OrderNoticeSettings,
      error: [Forbidden, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Turn order status notices on or off",
        description: `Changes the fields given (\`enabled\`, \`template\`; \`template: null\` sends texts) and answers the whole setting. ${WHAT} Needs a full-access key.`
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/settings/order-notifications")
  .annotateMerge(
    OpenApi.annotations({
      title: "Order notices",
      description: "WhatsApp messages to a lead when their order's status moves, optional per account (off by default)."
    })
  ) {}
