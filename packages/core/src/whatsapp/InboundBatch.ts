/**
 * What a WhatsApp webhook brings, as core receives it: per phone number, the messages that
 * came in, the statuses of ours, the errors about the number. A transport makes these out of
 * its provider's wire format (Meta's JSON: `@leadline/whatsapp-adapter`'s `meta/MetaWebhook.ts`);
 * core reads nothing else.
 */

export interface MessageError {
  /** Ours: always `provider_error`. */
  readonly code: string
  readonly message: string
  /** Meta's integer code, e.g. 131047. */
  readonly provider_code: number | null
}

/** An item of `value.errors[]`: a problem of the number or the app, not of one message. */
export interface ProviderError {
  readonly code: number | null
  readonly title: string | null
  readonly message: string | null
}

export interface InboundMedia {
  readonly provider_media_id: string
  readonly mime_type: string | null
  readonly sha256: string | null
  readonly filename: string | null
}

export interface InboundMessage {
  /** The wamid (at most 128 characters). */
  readonly externalId: string
  /** The sender's `wa_id`: digits as Meta sends them, no "+". */
  readonly from: string
  /** `profile.name` of the `contacts[]` entry whose `wa_id` is `from`. */
  readonly profileName: string | null
  readonly timestamp: Date
  /** As received; types we do not model are kept. */
  readonly type: string
  readonly text: string | null
  readonly media: InboundMedia | null
  /** The `messages[]` item exactly as parsed, so unmodelled types lose nothing. */
  readonly payload: unknown
  /** From the item's `errors[0]` (e.g. an unsupported type). */
  readonly error: MessageError | null
  /** The wamid this message answers (`context.id`) or, for a reaction, reacts to; null for neither. */
  readonly repliesTo?: string | null | undefined
}

export type DeliveryStatus = "sent" | "delivered" | "read" | "failed"

export interface StatusUpdate {
  readonly externalId: string
  readonly status: DeliveryStatus
  readonly timestamp: Date
  readonly recipientId: string | null
  /** `biz_opaque_callback_data`: our message id when we sent it. */
  readonly callbackData: string | null
  readonly error: MessageError | null
}

export interface Change {
  readonly phoneNumberId: string
  readonly displayPhoneNumber: string | null
  readonly messages: ReadonlyArray<InboundMessage>
  readonly statuses: ReadonlyArray<StatusUpdate>
  readonly errors: ReadonlyArray<ProviderError>
}

/** A restriction Meta announces on a number, as `restriction_info[]` names it. */
export interface RestrictionNotice {
  readonly type: string
  /** `expiration`; null when Meta gives none. */
  readonly until: Date | null
}

/**
 * What one of Meta's account webhooks (`phone_number_quality_update`, `account_update`) says of a
 * number's health. Routed by the business account (`entry[].id`), not by a `phone_number_id`.
 */
export interface HealthUpdate {
  readonly businessAccountId: string
  /** The number's digits; null: every number of the business account. */
  readonly phoneNumber: string | null
  readonly at: Date
  /** FLAGGED: `red`; UNFLAGGED: `yellow` (Meta says "medium or high", not which). */
  readonly quality?: "red" | "yellow"
  /** `current_limit`, as Meta names it (`TIER_1K`). */
  readonly tier?: string
  /** `ACCOUNT_RESTRICTION`: the number's restrictions now (empty: lifted). */
  readonly restrictions?: ReadonlyArray<RestrictionNotice>
  /** `DISABLED_UPDATE`: Meta disabled the business account (true) or reinstated it (false). */
  readonly disabled?: boolean
}
