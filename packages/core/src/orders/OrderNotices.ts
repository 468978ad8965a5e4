import { Context, Effect, Layer, Metric, Schema } from "effect"
import { authorize, authorizeFullAccess, type CurrentPrincipal } from "../auth/Principal.ts"
import { decodeInput, type InvalidInput, type PermissionDenied } from "../Errors.ts"
import { type SendMessage, TemplateLanguage, TemplateName } from "../messages/Message.ts"
import { Messages } from "../messages/Messages.ts"
import * as Tracing from "../Tracing.ts"
import { Transactor } from "../Transactor.ts"
import type { Order, OrderStatus } from "./Order.ts"

/**
 * WhatsApp notices of an order's status (issue 13: "an order's status change can notify the lead
 * through the same sender, optional per account"). Off until the account turns it on; then every
 * change of an order's `status` queues one message to its lead, in the change's transaction,
 * through the sender every message goes through.
 */

export const NoticeTemplate = Schema.Struct({
  name: TemplateName,
  language: TemplateLanguage
}).annotate({
  identifier: "OrderNoticeTemplate",
  description:
    "An approved WhatsApp template with two body parameters: {{1}} the order's id, {{2}} its status as WhatsApp names it"
})

export const OrderNoticeSettings = Schema.Struct({
  enabled: Schema.Boolean.annotate({
    description: "Queue a WhatsApp message to the lead when an order's status moves"
  }),
  template: Schema.NullOr(NoticeTemplate).annotate({
    description:
      "The template to send; null sends a text instead, which WhatsApp accepts only within 24 hours of the lead's last message"
  })
}).annotate({ identifier: "OrderNoticeSettings" })
export type OrderNoticeSettings = typeof OrderNoticeSettings.Type

/** `PATCH /api/v1/settings/order-notifications`: what is left out stays as it was. */
export const ConfigureOrderNotices = Schema.Struct({
  enabled: Schema.optional(OrderNoticeSettings.fields.enabled),
  template: Schema.optional(OrderNoticeSettings.fields.template)
}).annotate({ identifier: "ConfigureOrderNotices" })

/** What an account has until it says otherwise. */
export const DEFAULT_SETTINGS: OrderNoticeSettings = { enabled: false, template: null }

/** docs/contract-commerce-ai.md §3, "WhatsApp mapping": an order's status as WhatsApp's `order_status` names it. */
export const WHATSAPP_STATUS: Record<OrderStatus, string> = {
  pending: "pending",
  confirmed: "processing",
  shipped: "shipped",
  delivered: "completed",
  cancelled: "canceled"
}

/** The message for an order that just moved: the account's template, or a text. */
export const noticeOf = (order: Order, settings: OrderNoticeSettings): SendMessage => {
  const status = WHATSAPP_STATUS[order.status]
  return settings.template === null
    ? { type: "text", text: `Your order ${order.id} is now ${status}.` }
    : {
        type: "template",
        template: {
          name: settings.template.name,
          language: settings.template.language,
          components: [
            {
              type: "body",
              parameters: [
                { type: "text", text: order.id },
                { type: "text", text: status }
              ]
            }
          ]
        }
      }
}

/** The accounts' settings; an account that never set them has none (`DEFAULT_SETTINGS`). */
export class OrderNoticeSettingsRepo extends Context.Service<
  OrderNoticeSettingsRepo,
  {
    readonly find: (accountId: string) => Effect.Effect<OrderNoticeSettings | undefined>
    readonly save: (accountId: string, settings: OrderNoticeSettings) => Effect.Effect<void>
  }
>()("core/OrderNoticeSettingsRepo") {}

const notices = (outcome: "queued" | "skipped") =>
  Metric.counter("leadline_order_notices_total", {
    description: "WhatsApp notices of an order's status: queued, or skipped (no conversation, window closed, limit)",
    incremental: true,
    attributes: { outcome }
  })
export const noticesCounted = { queued: notices("queued"), skipped: notices("skipped") }

export class OrderNotices extends Context.Service<
  OrderNotices,
  {
    readonly settings: () => Effect.Effect<OrderNoticeSettings, PermissionDenied, CurrentPrincipal>
    readonly configure: (
      input: unknown
    ) => Effect.Effect<OrderNoticeSettings, PermissionDenied | InvalidInput, CurrentPrincipal>
    /**
     * After `order`'s status moved, in the caller's transaction: queues the notice when the account
     * wants one, as `userId`. Never fails the move: a notice that cannot go (the lead has no
     * conversation on an active channel, a text outside the window, the plan's limit) is skipped,
     * logged and counted.
     */
    readonly statusMoved: (accountId: string, userId: string, order: Order) => Effect.Effect<void>
  }
>()("core/OrderNotices") {
  static readonly layer: Layer.Layer<OrderNotices, never, OrderNoticeSettingsRepo | Messages | Transactor> =
    Layer.effect(
      OrderNotices,
      Effect.gen(function* () {
        const repo = yield* OrderNoticeSettingsRepo
        const messages = yield* Messages
        const transactor = yield* Transactor
        const decode = decodeInput(ConfigureOrderNotices, "settings")

        const settings = Effect.fnUntraced(function* () {
          const principal = yield* authorize("orders.view")
          return (yield* repo.find(principal.accountId)) ?? DEFAULT_SETTINGS
        }, Tracing.span("OrderNotices.settings"))

        const configure = Effect.fnUntraced(function* (raw: unknown) {
          const principal = yield* authorizeFullAccess
          const input = yield* decode(raw)
          return yield* transactor.withTransaction(
            Effect.gen(function* () {
              const current = (yield* repo.find(principal.accountId)) ?? DEFAULT_SETTINGS
              const saved: OrderNoticeSettings = {
                enabled: input.enabled ?? current.enabled,
                template: input.template === undefined ? current.template : input.template
              }
              yield* repo.save(principal.accountId, saved)
              return saved
            })
          )
        }, Tracing.span("OrderNotices.configure"))

        const statusMoved = (accountId: string, userId: string, order: Order) =>
          Effect.gen(function* () {
            const wanted = (yield* repo.find(accountId)) ?? DEFAULT_SETTINGS
            if (!wanted.enabled) return
            yield* messages.notify(accountId, userId, order.lead_id, noticeOf(order, wanted)).pipe(
              Effect.matchEffect({
                onSuccess: () => Metric.update(noticesCounted.queued, 1),
                onFailure: (reason) =>
                  Effect.andThen(
                    Metric.update(noticesCounted.skipped, 1),
                    Effect.logInfo("Order status notice skipped", { order_id: order.id, reason: reason._tag })
                  )
              })
            )
          })

        return OrderNotices.of({ settings, configure, statusMoved })
      })
    )
}
