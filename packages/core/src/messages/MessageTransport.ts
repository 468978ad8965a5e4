import { Context, type Effect, type Redacted, Schema } from "effect"

/** What goes to the provider: a free-form text, or an approved template. */
export type OutboundBody =
  | { readonly type: "text"; readonly text: string }
  | {
      readonly type: "template"
      readonly name: string
      readonly language: string
      readonly components: ReadonlyArray<unknown>
    }

export interface OutboundRequest {
  readonly channel: { readonly phoneNumberId: string; readonly accessToken: Redacted.Redacted<string> }
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
  }
>()("core/MessageTransport") {}
