import { Context, type Effect, type Redacted, Schema } from "effect"
import type { Interactive } from "./Interactive.ts"

/**
 * What goes to the provider: a free-form text, an approved template, an interactive message
 * (reply buttons or a list), or a reaction to the message with WhatsApp id `externalId` ("" takes
 * it back).
 */
export type OutboundBody =
  | { readonly type: "text"; readonly text: string }
  | {
      readonly type: "template"
      readonly name: string
      readonly language: string
      readonly components: ReadonlyArray<unknown>
    }
  | { readonly type: "interactive"; readonly interactive: Interactive }
  | { readonly type: "reaction"; readonly externalId: string; readonly emoji: string }

/** The number a message goes through, and its token. */
export interface ChannelCredentials {
  readonly phoneNumberId: string
  readonly accessToken: Redacted.Redacted<string>
}

/** A read receipt: the inbound message with WhatsApp id `externalId` (and those before it) was read. */
export interface ReadRequest {
  readonly channel: ChannelCredentials
  readonly externalId: string
}

export interface OutboundRequest {
  readonly channel: ChannelCredentials
  /** The conversation's `contact_wa_id` when known, else the lead's phone without "+". */
  readonly to: string
  readonly body: OutboundBody
  /** Our message id, sent as Meta's `biz_opaque_callback_data` and returned in status webhooks. */
  readonly callbackData: string
}

/** The provider took the message. */
export interface Accepted {
  readonly externalId: string
  readonly waId: string | null
}

/** The provider certainly did not send the message. */
export class Rejected extends Schema.TaggedError<Rejected>()("Rejected", {
  retryable: Schema.Boolean,
  retryAfterMs: Schema.NullOr(Schema.Number),
  providerCode: Schema.NullOr(Schema.Number),
  message: Schema.String,
  /** The channel's credentials were refused (token, permission): the channel records it. */
  channelError: Schema.optional(Schema.Boolean)
}) {}

/** The request may have reached the provider: it must never be sent again automatically. */
export class OutcomeUnknown extends Schema.TaggedError<OutcomeUnknown>()("OutcomeUnknown", {
  reason: Schema.String
}) {}

export type SendFailure = Rejected | OutcomeUnknown

/**
 * The outbound side of a messaging channel (docs/contract-messaging.md §6.2). Adapters: the WhatsApp
 * Cloud API client and the simulator. A send is attempted at most once per call; the sender
 * decides about retries from the failure's kind.
 */
export class MessageTransport extends Context.Service<
  MessageTransport,
  {
    readonly send: (request: OutboundRequest) => Effect.Effect<Accepted, SendFailure>
    /** Marks an inbound message read (the customer sees blue ticks); attempted once, as a send is. */
    readonly markRead: (request: ReadRequest) => Effect.Effect<void, SendFailure>
  }
>()("core/MessageTransport") {}
