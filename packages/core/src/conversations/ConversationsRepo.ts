import { Context, type Effect } from "effect"
import type { Page, Slice } from "../Pagination.ts"
import type { Conversation, Filters } from "./Conversation.ts"

/** Conversation storage, scoped to one account; one conversation per (channel, lead). */
export class ConversationsRepo extends Context.Service<
  ConversationsRepo,
  {
    /** `last_message_at` desc, then `id` desc. */
    readonly list: (accountId: string, filters: Filters, page: Page) => Effect.Effect<Slice<Conversation>>
    readonly find: (accountId: string, id: string) => Effect.Effect<Conversation | undefined>
    /** Replaces the stored conversation's status, snooze and assignment; undefined when it is not in the account. */
    readonly update: (accountId: string, conversation: Conversation) => Effect.Effect<Conversation | undefined>
    /** Opens every snoozed conversation whose `snoozed_until` is at or before `now`; how many. */
    readonly wakeSnoozed: (now: string) => Effect.Effect<number>
    /** Deletes a lead's conversations. */
    readonly removeForLead: (accountId: string, leadId: string) => Effect.Effect<void>
    /** The conversation of (channel, lead), made with `fresh` when there is none. */
    readonly findOrCreate: (accountId: string, fresh: Conversation) => Effect.Effect<Conversation>
    /** An inbound message arrived at `at` (WhatsApp's time): the window moves, the thread opens. */
    readonly recordInbound: (
      accountId: string,
      id: string,
      inbound: { readonly at: string; readonly waId: string; readonly now: string }
    ) => Effect.Effect<void>
    /** A message went out: the thread's latest activity moves, its status does not (§4.2). */
    readonly recordOutbound: (accountId: string, id: string, now: string) => Effect.Effect<void>
    /** Records WhatsApp's `wa_id` for the conversation's contact if it had none. */
    readonly learnWaId: (accountId: string, id: string, waId: string) => Effect.Effect<void>
    /** The lead whose conversation on this channel has WhatsApp's `wa_id`, if any. */
    readonly leadByWaId: (accountId: string, channelId: string, waId: string) => Effect.Effect<string | undefined>
  }
>()("core/ConversationsRepo") {}
