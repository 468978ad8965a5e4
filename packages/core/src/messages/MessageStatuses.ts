import { Context, Effect, Layer } from "effect"
import type { CurrentPrincipal } from "../auth/Principal.ts"
import { ConversationsRepo } from "../conversations/ConversationsRepo.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import * as Ids from "../Ids.ts"
import { Transactor } from "../Transactor.ts"
import { MessageUsage, periodOf } from "../usage/MessageUsage.ts"
import type { Message } from "./Message.ts"
import * as MessageEvents from "./MessageEvents.ts"
import { MessagesRepo } from "./MessagesRepo.ts"
import * as StatusMerge from "./StatusMerge.ts"

export interface Learned {
  /** WhatsApp's id, recorded the first time it is learned and never changed. */
  readonly externalId?: string | undefined
  /** The `wa_id` WhatsApp answered a send with: the conversation keeps it. */
  readonly waId?: string | null | undefined
}

/** A reservation that must not be refused: the message was sent, so it counts whatever the plan says. */
const NO_LIMIT = 2_147_483_647

const counts = (status: StatusMerge.OutboundStatus) => status !== "failed" && status !== "cancelled"

/**
 * Every change of an outbound message's delivery state goes through here, from the sender's
 * outcomes and from WhatsApp's status webhooks alike: the monotonic merge of §5.3, then in the
 * same transaction `message.sent` (the first acceptance) or `message.status_changed`, and the
 * usage given back when a message ends failed or cancelled (or taken again when it revives).
 */
export class MessageStatuses extends Context.Service<
  MessageStatuses,
  {
    readonly apply: (
      accountId: string,
      messageId: string,
      incoming: StatusMerge.Incoming | { readonly status: "cancelled"; readonly at: string },
      learned?: Learned
    ) => Effect.Effect<Message | undefined, never, CurrentPrincipal>
  }
>()("core/MessageStatuses") {
  static readonly layer: Layer.Layer<
    MessageStatuses,
    never,
    MessagesRepo | ConversationsRepo | MessageUsage | Transactor | Outbox
  > = Layer.effect(
    MessageStatuses,
    Effect.gen(function* () {
      const repo = yield* MessagesRepo
      const conversations = yield* ConversationsRepo
      const usage = yield* MessageUsage
      const transactor = yield* Transactor
      const outbox = yield* Outbox

      const apply = (
        accountId: string,
        messageId: string,
        incoming: StatusMerge.Incoming | { readonly status: "cancelled"; readonly at: string },
        learned: Learned = {}
      ) =>
        transactor.withTransaction(
          Effect.gen(function* () {
            const current = yield* repo.findForUpdate(accountId, messageId)
            if (current === undefined || current.direction !== "outbound") return undefined
            const before = current as Message & StatusMerge.Delivery
            const merged: StatusMerge.Merged =
              incoming.status === "cancelled"
                ? before.status === "queued"
                  ? {
                      changed: true,
                      accepted: false,
                      next: { ...before, status: "cancelled", error: null }
                    }
                  : { changed: false }
                : StatusMerge.merge(before, incoming)
            const externalId = current.external_id ?? learned.externalId ?? null
            if (!merged.changed && externalId === current.external_id) return current
            const now = yield* Ids.now
            const next: Message = merged.changed
              ? {
                  ...current,
                  ...merged.next,
                  external_id: externalId,
                  provider_timestamp: incoming.at,
                  updated_at: now
                }
              : { ...current, external_id: externalId, updated_at: now }
            yield* repo.saveDelivery(accountId, next)
            if (learned.waId) yield* conversations.learnWaId(accountId, current.conversation_id, learned.waId)
            if (!merged.changed) return next
            const period = periodOf(current.created_at)
            if (counts(before.status) && !counts(next.status as StatusMerge.OutboundStatus)) {
              yield* usage.release(accountId, period, 1)
            } else if (!counts(before.status) && counts(next.status as StatusMerge.OutboundStatus)) {
              // Revived from outcome_unknown: the provider took it after all, and it counts again.
              yield* Effect.asVoid(usage.reserve(accountId, period, 1, NO_LIMIT))
            }
            if (merged.accepted) yield* emit(MessageEvents.sent, next)
            else if (next.status !== "sent") yield* emit(MessageEvents.statusChanged, next)
            return next
          }).pipe(Effect.provideService(Outbox, outbox))
        )

      return MessageStatuses.of({ apply })
    })
  )
}
