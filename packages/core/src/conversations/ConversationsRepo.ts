import { Context, type Effect } from "effect"
import type { Bounds } from "../metrics/Calendar.ts"
import type { Listed, Page } from "../Pagination.ts"
import type { Conversation, Filters } from "./Conversation.ts"

/** Conversation storage, scoped to one account; one conversation per (channel, lead). */
export class ConversationsRepo extends Context.Service<
  ConversationsRepo,
  {
    /** `last_message_at` desc, then `id` desc. */
    readonly list: (accountId: string, filters: Filters, page: Page) => Effect.Effect<Listed<Conversation>>
    readonly find: (accountId: string, id: string) => Effect.Effect<Conversation | undefined>
    /** Replaces the stored conversation's status, snooze and assignment; undefined when it is not in the account. */
    readonly update: (accountId: string, conversation: Conversation) => Effect.Effect<Conversation | undefined>
    /** How many conversations were made in each bucket; one is made with its first message, in its transaction. */
    readonly createdPerBucket: (accountId: string, bounds: Bounds) => Effect.Effect<ReadonlyArray<number>>
    /**
     * Opens every snoozed conversation whose `snoozed_until` is at or before `now`, in every
     * account: each as it is now, with its account and the snooze it had.
     */
    readonly wakeSnoozed: (
      now: string
    ) => Effect.Effect<
      ReadonlyArray<{ readonly accountId: string; readonly conversation: Conversation; readonly snoozedUntil: string }>
    >
    /** Deletes a lead's conversations. */
    readonly removeForLead: (accountId: string, leadId: string) => Effect.Effect<void>
    /**
     * The conversation of each (channel, lead), made from its `fresh` one when there is none; in
     * the order given. Each (channel, lead) appears once.
     */
    readonly findOrCreate: (
      accountId: string,
      fresh: ReadonlyArray<Conversation>
    ) => Effect.Effect<ReadonlyArray<Conversation>>
    /** Inbound messages arrived, the latest at `at` (WhatsApp's time): each window moves, each thread opens. */
    readonly recordInbound: (
      accountId: string,
      inbound: ReadonlyArray<{ readonly id: string; readonly at: string; readonly waId: string; readonly now: string }>
    ) => Effect.Effect<void>
    /** Messages went out: each thread's latest activity moves, its status does not (§4.2). */
    readonly recordOutbound: (accountId: string, ids: ReadonlyArray<string>, now: string) => Effect.Effect<void>
    /** Records WhatsApp's `wa_id` for each conversation's contact that had none. */
    readonly learnWaIds: (
      accountId: string,
      learned: ReadonlyArray<{ readonly id: string; readonly waId: string }>
    ) => Effect.Effect<void>
    /** The leads whose conversations on this channel have these WhatsApp `wa_id`s: `wa_id` → lead id. */
    readonly leadsByWaId: (
      accountId: string,
      channelId: string,
      waIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, string>>
  }
>()("core/ConversationsRepo") {}
