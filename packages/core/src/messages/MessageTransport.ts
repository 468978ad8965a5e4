import { Context, type Effect, type Redacted, Schema, type Stream } from "effect"
import type { Interactive } from "./Interactive.ts"
import type { SendType } from "./UploadedMedia.ts"

/**
 * What goes to the provider: a free-form text, an approved template, an interactive message
 * (reply buttons or a list), a reaction to the message with WhatsApp id `externalId` ("" takes
 * it back), or a file: one the provider holds (its id, from `upload`) or a link it fetches.
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
  | {
      readonly type: SendType
      readonly media: { readonly id: string } | { readonly link: string }
      readonly caption: string | null
      readonly filename: string | null
    }

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

/** A file handed to the provider before the message that sends it (docs/contract-messaging.md §6.2). */
export interface UploadRequest {
  readonly channel: ChannelCredentials
  readonly type: SendType
  readonly contentType: string
  readonly filename: string | null
  readonly size: number
  /** Read as the upload goes: a 100 MB document is never held whole. */
  readonly bytes: Stream.Stream<Uint8Array>
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
    /**
     * Hands a file to the provider and answers its id there. An upload sends no message, so one
     * whose outcome is unknown is safe to repeat: it fails `Rejected` with `retryable`, never
     * `OutcomeUnknown`.
     */
    readonly upload: (request: UploadRequest) => Effect.Effect<string, Rejected>
  }
>()("core/MessageTransport") {}
