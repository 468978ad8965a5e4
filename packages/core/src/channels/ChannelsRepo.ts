import { Context, type Effect, type Redacted } from "effect"
import type { Conflict } from "../Errors.ts"
import type { Listed, Page } from "../Pagination.ts"
import type { Channel, ChannelError, ChannelHealth } from "./Channel.ts"

/** A channel with what sending through it needs; only the sender and the inbound path read this. */
export interface Connection {
  readonly accountId: string
  readonly channel: Channel
  readonly accessToken: Redacted.Redacted<string>
}

/**
 * Channel storage. A `phone_number_id` belongs to one channel in the whole deployment
 * (the inbound webhook is routed by it), so its uniqueness is global.
 */
export class ChannelsRepo extends Context.Service<
  ChannelsRepo,
  {
    readonly insert: (accountId: string, channel: Channel, accessToken: string) => Effect.Effect<void, Conflict>
    /** Newest first. */
    readonly list: (accountId: string, page: Page) => Effect.Effect<Listed<Channel>>
    readonly find: (accountId: string, id: string) => Effect.Effect<Channel | undefined>
    /** Replaces the stored channel (and the token when given); undefined when it is not in the account. */
    readonly update: (
      accountId: string,
      channel: Channel,
      accessToken: string | undefined
    ) => Effect.Effect<Channel | undefined>
    /** What the provider last refused about the channel's credentials (its token), or null. */
    readonly setLastError: (accountId: string, id: string, error: ChannelError | null) => Effect.Effect<void>
    /** The channel an inbound webhook names, in any account. */
    readonly connection: (phoneNumberId: string) => Effect.Effect<Connection | undefined>
    /**
     * The channels of a WhatsApp Business Account (`business_account_id`), in any account: Meta's
     * account-level webhooks name the business account, not a `phone_number_id`.
     */
    readonly byBusinessAccount: (
      businessAccountId: string
    ) => Effect.Effect<ReadonlyArray<{ readonly accountId: string; readonly channel: Channel }>>
    /** Records what Meta says of the number's health (and `updated_at`); the channel as it is then. */
    readonly setHealth: (
      accountId: string,
      id: string,
      health: ChannelHealth,
      now: string
    ) => Effect.Effect<Channel | undefined>
    /** The account's active channels, oldest first (a send without `channel_id` takes the only one). */
    readonly active: (accountId: string) => Effect.Effect<ReadonlyArray<Channel>>
    /** Every account's active channels that name a WhatsApp Business Account, oldest first (the template sync). */
    readonly withBusinessAccount: () => Effect.Effect<ReadonlyArray<Connection>>
  }
>()("core/ChannelsRepo") {}

export const numberTakenMessage = "This phone_number_id is already connected"
