import * as OpsMetrics from "../observability/OpsMetrics.ts"
import { Context, Effect, Layer } from "effect"
import type { CurrentPrincipal } from "../auth/Principal.ts"
import { ConversationsRepo } from "../conversations/ConversationsRepo.ts"
import { emitAll, Outbox, type Pending, pending } from "../events/Outbox.ts"
import * as Ids from "../Ids.ts"
import { Transactor } from "../Transactor.ts"
import { MessageUsage, periodOf } from "../usage/MessageUsage.ts"
import type { Message } from "./Message.ts"
import * as MessageEvents from "./MessageEvents.ts"
import { MessagesRepo } from "./MessagesRepo.ts"
import * as StatusMerge from "./StatusMerge.ts"
import { QueueExits, TEMPLATE_ERRORS, type Touched } from "./QueueExits.ts"

export interface Learned {
  /** WhatsApp's id, recorded the first time it is learned and never changed. */
  readonly externalId?: string | undefined
  /** The `wa_id` WhatsApp answered a send with: the conversation keeps it. */
  readonly waId?: string | null | undefined
}

/** One change to merge into an outbound message. */
export interface Update {
  readonly messageId: string
  readonly incoming: StatusMerge.Incoming | { readonly status: "cancelled"; readonly at: string }
  readonly learned?: Learned | undefined
  /** Merged only if the message is on this channel (a status found by the id we sent as callback data). */
  readonly channelId?: string | undefined
}

/** A reservation that must not be refused: the message was sent, so it counts whatever the plan says. */
const NO_LIMIT = 2_147_483_647

const counts = (status: StatusMerge.OutboundStatus) => status !== "failed" && status !== "cancelled"

const mergeOne = (before: Message & StatusMerge.Delivery, incoming: Update["incoming"]): StatusMerge.Merged =>
  incoming.status === "cancelled"
    ? before.status === "queued"
      ? { changed: true, accepted: false, next: { ...before, status: "cancelled", error: null } }
      : { changed: false }
    : StatusMerge.merge(before, incoming)

/**
 * Every change of an outbound message's delivery state goes through here, from the sender's
 * outcomes and from WhatsApp's status webhooks alike: the monotonic merge of §5.3, then in the
 * same transaction `message.sent` (the first acceptance) or `message.status_changed`, and the
 * usage given back when a message ends failed or cancelled (or taken again when it revives).
 * A batch costs a fixed number of statements: the messages locked at once, merged in memory in
 * the order given (one message may appear more than once), written back at once.
 */
export class MessageStatuses extends Context.Service<
  MessageStatuses,
  {
    /** Per update, the message after it; undefined when it is not an outbound message of the account (or channel). */
    readonly applyAll: (
      accountId: string,
      updates: ReadonlyArray<Update>
    ) => Effect.Effect<ReadonlyArray<Message | undefined>, never, CurrentPrincipal>
  }
>()("core/MessageStatuses") {
  static readonly layer: Layer.Layer<
    MessageStatuses,
    never,
    MessagesRepo | ConversationsRepo | MessageUsage | Transactor | Outbox | QueueExits
  > = Layer.effect(
    MessageStatuses,
    Effect.gen(function* () {
      const repo = yield* MessagesRepo
      const conversations = yield* ConversationsRepo
      const usage = yield* MessageUsage
      const transactor = yield* Transactor
      const outbox = yield* Outbox
      const exits = yield* QueueExits

      const applyAll = (accountId: string, updates: ReadonlyArray<Update>) =>
        updates.length === 0
          ? Effect.succeed([])
          : Effect.suspend(() => {
              // The statuses reached, counted for the operator once the transaction commits.
              const reached: Array<string> = []
              return transactor
                .withTransaction(
                  Effect.gen(function* () {
                    const locked = yield* repo.findForUpdate(accountId, [...new Set(updates.map((u) => u.messageId))])
                    const latest = new Map(locked.map((message) => [message.id, message]))
                    const dirty = new Set<string>()
                    const waIds = new Map<string, string>()
                    const released = new Map<string, number>()
                    const revived = new Map<string, number>()
                    const events: Array<Pending> = []
                    const touched: Array<Touched> = []
                    const results: Array<Message | undefined> = []
                    const now = yield* Ids.now
                    for (const { messageId, incoming, learned = {}, channelId } of updates) {
                      const current = latest.get(messageId)
                      if (
                        current === undefined ||
                        current.direction !== "outbound" ||
                        (channelId !== undefined && current.channel_id !== channelId)
                      ) {
                        results.push(undefined)
                        continue
                      }
                      const before = current as Message & StatusMerge.Delivery
                      const merged = mergeOne(before, incoming)
                      const externalId = current.external_id ?? learned.externalId ?? null
                      if (!merged.changed && externalId === current.external_id) {
                        results.push(current)
                        continue
                      }
                      const next: Message = merged.changed
                        ? {
                            ...current,
                            ...merged.next,
                            external_id: externalId,
                            provider_timestamp: incoming.at,
                            updated_at: now
                          }
                        : { ...current, external_id: externalId, updated_at: now }
                      latest.set(messageId, next)
                      dirty.add(messageId)
                      results.push(next)
                      if (learned.waId) waIds.set(current.conversation_id, learned.waId)
                      if (!merged.changed) continue
                      const period = periodOf(current.created_at)
                      if (next.status !== before.status) reached.push(next.status)
                      const after = next.status as StatusMerge.OutboundStatus
                      if (counts(before.status) && !counts(after)) released.set(period, (released.get(period) ?? 0) + 1)
                      // Revived from outcome_unknown: the provider took it after all, and it counts again.
                      if (!counts(before.status) && counts(after)) revived.set(period, (revived.get(period) ?? 0) + 1)
                      if (current.campaign_id !== null) {
                        const error = after === "failed" ? next.error : null
                        if (before.status === "queued" && after !== "queued") {
                          touched.push({
                            campaignId: current.campaign_id,
                            leftQueue: true,
                            templateError:
                              error?.provider_code != null && TEMPLATE_ERRORS.has(error.provider_code)
                                ? error
                                : undefined
                          })
                        }
                      }
                      if (merged.accepted) events.push(pending(MessageEvents.sent, next))
                      else if (next.status !== "sent") events.push(pending(MessageEvents.statusChanged, next))
                    }
                    if (dirty.size === 0) return results
                    yield* repo.saveDeliveries(
                      accountId,
                      [...dirty].map((id) => latest.get(id)!)
                    )
                    // The usage counters before the conversations, as every send takes them (Messages.ts):
                    // a revival's reservation waits for every stripe, and a send holding one of them
                    // may be about to touch the conversation (found by the soak, bench/SOAK.md).
                    for (const [period, n] of released) yield* usage.release(accountId, period, n)
                    for (const [period, n] of revived)
                      yield* Effect.asVoid(usage.reserve(accountId, period, n, NO_LIMIT))
                    if (waIds.size > 0) {
                      yield* conversations.learnWaIds(
                        accountId,
                        [...waIds].map(([id, waId]) => ({ id, waId }))
                      )
                    }
                    yield* emitAll(events)
                    // After the messages are written, so a campaign sees its own last message out of the queue.
                    yield* exits.run({ accountId, touched })
                    return results
                  }).pipe(Effect.provideService(Outbox, outbox))
                )
                .pipe(Effect.tap(() => OpsMetrics.countMessages("outbound", reached)))
            })

      return MessageStatuses.of({ applyAll })
    })
  )
}
