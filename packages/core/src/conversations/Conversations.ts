import { Clock, Context, Effect, Layer } from "effect"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import { authorize, authorizeFullAccess, CurrentPrincipal } from "../auth/Principal.ts"
import { systemPrincipal } from "../auth/SystemPrincipal.ts"
import { emitAll, Outbox, pending } from "../events/Outbox.ts"
import { Transactor } from "../Transactor.ts"
import * as ConversationEvents from "./ConversationEvents.ts"
import {
  decodeInput,
  type InvalidInput,
  invalidField,
  NotFound,
  type PermissionDenied,
  unknownAssignee
} from "../Errors.ts"
import * as Ids from "../Ids.ts"
import * as Pagination from "../Pagination.ts"
import * as Tracing from "../Tracing.ts"
import { LeadsRepo } from "../leads/LeadsRepo.ts"
import {
  type Conversation,
  type ConversationView,
  type Filters,
  previewText,
  UpdateConversation
} from "./Conversation.ts"
import { ConversationsRepo } from "./ConversationsRepo.ts"
import { ThreadSummaries } from "./ThreadSummaries.ts"

type Needs = CurrentPrincipal

/** Reading the account's threads: `conversations.view` (`conversations:read` or `messages:send`). */
export class Conversations extends Context.Service<
  Conversations,
  {
    readonly list: (
      filters: Filters,
      page: Pagination.Page
    ) => Effect.Effect<
      { conversations: ReadonlyArray<ConversationView>; meta: Pagination.Meta },
      PermissionDenied,
      Needs
    >
    readonly get: (id: string) => Effect.Effect<ConversationView, PermissionDenied | NotFound, Needs>
    readonly update: (
      id: string,
      input: UpdateConversation
    ) => Effect.Effect<ConversationView, PermissionDenied | NotFound | InvalidInput, Needs>
    /** The system's: opens every conversation whose snooze has run out, in every account; how many. */
    readonly reopenSnoozed: Effect.Effect<number>
  }
>()("core/Conversations") {
  static readonly layer: Layer.Layer<
    Conversations,
    never,
    ConversationsRepo | AccountsRepo | LeadsRepo | ThreadSummaries | Transactor | Outbox
  > = Layer.effect(
    Conversations,
    Effect.gen(function* () {
      const repo = yield* ConversationsRepo
      const accounts = yield* AccountsRepo
      const leads = yield* LeadsRepo
      const threads = yield* ThreadSummaries
      const transactor = yield* Transactor
      const outbox = yield* Outbox
      // One service, not a context: merging a context copies every service of the request's.
      const withOutbox = Effect.provideService(Outbox, outbox)
      const decodeUpdate = decodeInput(UpdateConversation, "conversation")

      /**
       * What an inbox shows of each thread (§4.1): two reads for a whole page, its leads and its
       * messages' summaries, never one a row. A lead is deleted with its threads, so each has one.
       */
      const views = Effect.fnUntraced(function* (accountId: string, page: ReadonlyArray<Conversation>) {
        const [people, summaries] = yield* Effect.all(
          [
            leads.findByIds(accountId, [...new Set(page.map((c) => c.lead_id))]),
            threads.summaries(
              accountId,
              page.map((c) => c.id)
            )
          ],
          { concurrency: 2 }
        )
        const byId = new Map(people.map((lead) => [lead.id, lead]))
        return page.map((c): ConversationView => {
          const lead = byId.get(c.lead_id)
          const summary = summaries.get(c.id)
          return {
            ...c,
            lead: { id: c.lead_id, name: lead?.name ?? "", phone: lead?.phone ?? "" },
            last_message:
              summary === undefined
                ? null
                : {
                    id: summary.last.id,
                    direction: summary.last.direction,
                    type: summary.last.type,
                    text: previewText(summary.last),
                    status: summary.last.status,
                    created_at: summary.last.created_at
                  },
            unread_count: summary?.unread ?? 0
          }
        })
      })
      const viewOf = (accountId: string, conversation: Conversation) =>
        Effect.map(views(accountId, [conversation]), ([view]) => view!)

      const list = Effect.fnUntraced(function* (filters: Filters, page: Pagination.Page) {
        const principal = yield* authorize("conversations.view")
        const slice = yield* repo.list(principal.accountId, filters, page)
        return {
          conversations: yield* views(principal.accountId, slice.items),
          meta: Pagination.meta(page, slice.total)
        }
      }, Tracing.span("Conversations.list"))

      const get = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("conversations.view")
        const found = yield* repo.find(principal.accountId, id)
        if (found === undefined) return yield* new NotFound({ resource: "conversation", id })
        return yield* viewOf(principal.accountId, found)
      }, Tracing.span("Conversations.get"))

      /** Full access (§13a.1). `snoozed_until` goes with `snoozed` only; any other status clears it. */
      const update = Effect.fnUntraced(function* (id: string, raw: UpdateConversation) {
        const principal = yield* authorizeFullAccess
        const input = yield* decodeUpdate(raw)
        const current = yield* repo.find(principal.accountId, id)
        if (current === undefined) return yield* new NotFound({ resource: "conversation", id })
        const status = input.status ?? current.status
        if (input.snoozed_until != null && status !== "snoozed") {
          return yield* invalidField("snoozed_until", 'only with status "snoozed"')
        }
        const now = yield* Clock.currentTimeMillis
        if (input.snoozed_until != null && Date.parse(input.snoozed_until) <= now) {
          return yield* invalidField("snoozed_until", "must be in the future")
        }
        if (
          input.assigned_user_id != null &&
          (yield* accounts.findUser(principal.accountId, input.assigned_user_id)) === undefined
        ) {
          return yield* unknownAssignee()
        }
        const next: Conversation = {
          ...current,
          status,
          snoozed_until:
            status !== "snoozed"
              ? null
              : input.snoozed_until === undefined
                ? current.snoozed_until
                : input.snoozed_until === null
                  ? null
                  : new Date(input.snoozed_until).toISOString(),
          assigned_user_id: input.assigned_user_id === undefined ? current.assigned_user_id : input.assigned_user_id,
          // Resolving ends a handoff: the customer's next message is the agent's again.
          handoff: input.handoff === null || status === "resolved" ? null : current.handoff,
          updated_at: yield* Ids.now
        }
        const updated = yield* transactor.withTransaction(
          Effect.gen(function* () {
            const updated = yield* repo.update(principal.accountId, next)
            if (updated === undefined) return yield* new NotFound({ resource: "conversation", id })
            yield* emitAll(ConversationEvents.changeEvents(current, updated)).pipe(withOutbox)
            return updated
          })
        )
        // After the commit: the answer is the list's row, the event the conversation alone (§9).
        return yield* viewOf(principal.accountId, updated)
      }, Tracing.span("Conversations.update"))

      // Each woken thread's `conversation.status_changed`, in its account, in the wake's transaction.
      const reopenSnoozed = transactor.withTransaction(
        Effect.gen(function* () {
          const woken = yield* repo.wakeSnoozed(new Date(yield* Clock.currentTimeMillis).toISOString())
          for (const { accountId, conversation, snoozedUntil } of woken) {
            yield* emitAll([
              pending(ConversationEvents.statusChanged, conversation, {
                status: "snoozed",
                snoozed_until: snoozedUntil
              })
            ]).pipe(withOutbox, Effect.provideService(CurrentPrincipal, systemPrincipal(accountId, "snoozer")))
          }
          return woken.length
        })
      )

      return Conversations.of({ list, get, update, reopenSnoozed })
    })
  )
}
