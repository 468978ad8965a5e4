import { Effect, Option } from "effect"
import { CustomerSimulator } from "@leadline/core/whatsapp/CustomerSimulator"
import { HttpApiBuilder } from "effect/http-api"
import { Operator } from "@leadline/core/admin/Operator"
import { page } from "@leadline/core/Pagination"
import { Api } from "../Api.ts"
import { wire } from "../ErrorMapping.ts"
import { NotFound } from "../WireErrors.ts"

export const layer = HttpApiBuilder.group(
  Api,
  "admin",
  Effect.fnUntraced(function* (handlers) {
    const operator = yield* Operator
    // Offered by the simulator transport only: without it the route answers as if it did not exist.
    const simulator = yield* Effect.serviceOption(CustomerSimulator)
    return handlers
      .handle("createAccount", ({ payload }) => operator.createAccount(payload))
      .handle("listAccounts", ({ query }) => operator.listAccounts(page(query)))
      .handle("getAccount", ({ params }) => wire(operator.getAccount(params.account_id)))
      .handle("createUser", ({ params, payload }) => wire(operator.createUser(params.account_id, payload)))
      .handle("createKey", ({ params, payload }) => wire(operator.createKey(params.account_id, payload)))
      .handle("listKeys", ({ params }) => wire(Effect.map(operator.listKeys(params.account_id), (keys) => ({ keys }))))
      .handle("setScopes", ({ params, payload }) => wire(operator.setScopes(params.key_id, payload.scopes)))
      .handle("revokeKey", ({ params }) => wire(operator.revokeKey(params.key_id)))
      .handle("setPlan", ({ params, payload }) => wire(operator.setPlan(params.account_id, payload.plan_id)))
      .handle("simulateCustomer", ({ payload }) =>
        Option.match(simulator, {
          onNone: () => Effect.fail(new NotFound({ error: "No such route" })),
          onSome: (customer) =>
            customer.playCustomer({
              phoneNumberId: payload.phone_number_id,
              from: payload.from,
              name: payload.name,
              text: payload.text,
              replyTo: payload.reply_to,
              choice:
                payload.button_reply !== undefined
                  ? { type: "button_reply", ...payload.button_reply }
                  : payload.list_reply !== undefined
                    ? { type: "list_reply", ...payload.list_reply }
                    : undefined
            })
        })
      )
      .handle("simulateNumberQuality", ({ payload }) =>
        Option.match(simulator, {
          onNone: () => Effect.fail(new NotFound({ error: "No such route" })),
          onSome: (meta) =>
            Effect.as(
              meta.playNumberQuality({
                businessAccountId: payload.business_account_id,
                displayPhoneNumber: payload.display_phone_number,
                event: payload.event,
                currentLimit: payload.current_limit ?? "TIER_1K"
              }),
              {}
            )
        })
      )
  })
)
