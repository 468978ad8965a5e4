import { Effect } from "effect"
import * as Hook from "../Hook.ts"
import { InboundReceived } from "../messages/InboundReceived.ts"
import { WhatsAppOrders } from "./WhatsAppOrders.ts"

/** A new WhatsApp `order` message places its order once, in the transaction that stored it. */
export const fromInbound = Hook.on(
  InboundReceived,
  "orders",
  Effect.map(
    WhatsAppOrders,
    (whatsAppOrders) =>
      ({ accountId, messages }) =>
        whatsAppOrders
          .place(
            accountId,
            messages.flatMap((message) =>
              message.type === "order"
                ? [{ wamid: message.external_id!, leadId: message.lead_id, payload: message.provider_payload }]
                : []
            )
          )
          .pipe(Effect.asVoid)
  )
)
