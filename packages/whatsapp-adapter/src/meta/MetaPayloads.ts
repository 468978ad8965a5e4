import type { DeliveryStatus } from "@leadline/core/whatsapp/InboundBatch"

/**
 * Webhook bodies written the way Meta writes them, for the simulator that plays Meta and
 * for tests and benchmarks that post as Meta would.
 */

type Json = Record<string, unknown>

/**
 * Serialised JSON the way Meta writes it (and signs it): every non-ASCII UTF-16 unit
 * as `\uXXXX` with lowercase hex, and "/" as "\/". Outside strings JSON has neither,
 * so a plain replace over the whole text is exact.
 */
export const escapeLikeMeta = (json: string): string =>
  json
    .replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)
    .replace(/\//g, "\\/")

const encoder = new TextEncoder()

const seconds = (date: Date): string => String(Math.floor(date.getTime() / 1000))

const envelope = (phoneNumberId: string, displayPhoneNumber: string, value: Json): Uint8Array =>
  encoder.encode(
    escapeLikeMeta(
      JSON.stringify({
        object: "whatsapp_business_account",
        entry: [
          {
            id: "0",
            changes: [
              {
                value: {
                  messaging_product: "whatsapp",
                  metadata: { display_phone_number: displayPhoneNumber, phone_number_id: phoneNumberId },
                  ...value
                },
                field: "messages"
              }
            ]
          }
        ]
      })
    )
  )

/**
 * One `messages` change on a number, as Meta posts it: `value` holds its `contacts`, `messages`
 * or `statuses` (the builders below make the usual ones; a test or a benchmark may give any).
 */
export const messagesChangePayload = (phoneNumberId: string, displayPhoneNumber: string, value: Json): Uint8Array =>
  envelope(phoneNumberId, displayPhoneNumber, value)

/** A customer's file in a `messages[]` item: Meta names it by its media id, never with its bytes. */
export const mediaMessage = (options: {
  readonly from: string
  readonly externalId: string
  readonly timestamp: Date
  readonly type: "image" | "audio" | "video" | "document" | "sticker"
  readonly mediaId: string
  readonly mimeType: string
  readonly sha256?: string | undefined
  readonly filename?: string | undefined
}): Json => ({
  from: options.from,
  id: options.externalId,
  timestamp: seconds(options.timestamp),
  type: options.type,
  [options.type]: {
    id: options.mediaId,
    mime_type: options.mimeType,
    ...(options.sha256 === undefined ? {} : { sha256: options.sha256 }),
    ...(options.filename === undefined ? {} : { filename: options.filename })
  }
})

/** A customer's text message, as Meta delivers it. */
export interface InboundTextOptions {
  readonly from: string
  readonly name: string | null
  readonly text: string
  readonly externalId: string
  readonly timestamp: Date
  /** The wamid of the message it answers: Meta's `context` (a quoted reply). */
  readonly repliesTo?: string | undefined
}

/** Meta's `context` of a reply to the business's message `wamid` on `displayPhoneNumber`. */
const contextOf = (displayPhoneNumber: string, wamid: string | undefined) =>
  wamid === undefined ? {} : { context: { from: displayPhoneNumber, id: wamid } }

/** Customers' text messages on one number, in one webhook as Meta batches them (one contact per sender). */
export const inboundTextsPayload = (
  phoneNumberId: string,
  displayPhoneNumber: string,
  messages: ReadonlyArray<InboundTextOptions>
): Uint8Array => {
  const contacts = new Map<string, { profile: { name?: string }; wa_id: string }>()
  for (const message of messages) {
    if (!contacts.has(message.from)) {
      contacts.set(message.from, {
        profile: message.name === null ? {} : { name: message.name },
        wa_id: message.from
      })
    }
  }
  return envelope(phoneNumberId, displayPhoneNumber, {
    contacts: [...contacts.values()],
    messages: messages.map((message) => ({
      ...contextOf(displayPhoneNumber, message.repliesTo),
      from: message.from,
      id: message.externalId,
      timestamp: seconds(message.timestamp),
      type: "text",
      text: { body: message.text }
    }))
  })
}

export const inboundTextPayload = (
  options: InboundTextOptions & { readonly phoneNumberId: string; readonly displayPhoneNumber: string }
): Uint8Array => inboundTextsPayload(options.phoneNumberId, options.displayPhoneNumber, [options])

/** A customer's tap on a reply button or a list row of the business's interactive message `repliesTo`. */
export interface InboundInteractiveReplyOptions {
  readonly phoneNumberId: string
  readonly displayPhoneNumber: string
  readonly from: string
  readonly name: string | null
  readonly externalId: string
  readonly timestamp: Date
  /** As Meta always sends it for a choice; left out only to play a payload without one. */
  readonly repliesTo?: string | undefined
  readonly reply:
    | { readonly type: "button_reply"; readonly id: string; readonly title: string }
    | {
        readonly type: "list_reply"
        readonly id: string
        readonly title: string
        readonly description?: string | undefined
      }
}

/** A button or list reply (`type: interactive`), as Meta posts it: the answered message in `context`. */
export const inboundInteractiveReplyPayload = (options: InboundInteractiveReplyOptions): Uint8Array => {
  const { type, ...chosen } = options.reply
  return envelope(options.phoneNumberId, options.displayPhoneNumber, {
    contacts: [{ profile: options.name === null ? {} : { name: options.name }, wa_id: options.from }],
    messages: [
      {
        ...contextOf(options.displayPhoneNumber, options.repliesTo),
        from: options.from,
        id: options.externalId,
        timestamp: seconds(options.timestamp),
        type: "interactive",
        interactive: { type, [type]: chosen }
      }
    ]
  })
}

export interface InboundOrderOptions {
  readonly phoneNumberId: string
  readonly displayPhoneNumber: string
  readonly from: string
  readonly name: string | null
  readonly externalId: string
  readonly timestamp: Date
  readonly catalogId: string
  readonly items: ReadonlyArray<{
    readonly product_retailer_id: string
    readonly quantity: number
    readonly item_price: number
    readonly currency: string
  }>
  readonly text?: string | undefined
}

/** A customer's cart sent from a catalogue (`type: order`), as Meta posts it. */
export const inboundOrderPayload = (options: InboundOrderOptions): Uint8Array =>
  envelope(options.phoneNumberId, options.displayPhoneNumber, {
    contacts: [{ profile: options.name === null ? {} : { name: options.name }, wa_id: options.from }],
    messages: [
      {
        from: options.from,
        id: options.externalId,
        timestamp: seconds(options.timestamp),
        type: "order",
        order: {
          catalog_id: options.catalogId,
          product_items: options.items,
          ...(options.text === undefined ? {} : { text: options.text })
        }
      }
    ]
  })

export interface StatusOptions {
  readonly externalId: string
  readonly status: DeliveryStatus
  readonly recipientId: string
  readonly callbackData: string | null
  readonly timestamp: Date
  readonly error?: { readonly code: number; readonly title: string; readonly message: string } | undefined
}

const statusItem = (options: StatusOptions) => ({
  id: options.externalId,
  status: options.status,
  timestamp: seconds(options.timestamp),
  recipient_id: options.recipientId,
  ...(options.callbackData === null ? {} : { biz_opaque_callback_data: options.callbackData }),
  // Meta prices on `sent` and the first of `delivered`/`read`; `delivered` stands for it here.
  ...(options.status === "sent" || options.status === "delivered"
    ? { pricing: { billable: true, pricing_model: "PMP", type: "regular", category: "utility" } }
    : {}),
  ...(options.error === undefined
    ? {}
    : {
        errors: [
          {
            code: options.error.code,
            title: options.error.title,
            message: options.error.message,
            error_data: { details: options.error.message },
            href: "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/"
          }
        ]
      })
})

/** Statuses of our messages on one number, in one webhook as Meta batches them, in the v24 shape (no `conversation`). */
export const statusesPayload = (
  phoneNumberId: string,
  displayPhoneNumber: string,
  statuses: ReadonlyArray<StatusOptions>
): Uint8Array => envelope(phoneNumberId, displayPhoneNumber, { statuses: statuses.map(statusItem) })

/** A status of one of our messages, in the v24 shape (no `conversation`). */
export const statusPayload = (
  options: StatusOptions & { readonly phoneNumberId: string; readonly displayPhoneNumber: string }
): Uint8Array => statusesPayload(options.phoneNumberId, options.displayPhoneNumber, [options])

/** One of Meta's account-level webhooks: the business account's entry, one change of `field`. */
const accountEnvelope = (businessAccountId: string, at: Date, field: string, value: Json): Uint8Array =>
  encoder.encode(
    escapeLikeMeta(
      JSON.stringify({
        object: "whatsapp_business_account",
        entry: [{ id: businessAccountId, time: Math.floor(at.getTime() / 1000), changes: [{ value, field }] }]
      })
    )
  )

/** `phone_number_quality_update`: Meta flags or unflags a number, or moves its messaging limit. */
export const qualityUpdatePayload = (options: {
  readonly businessAccountId: string
  /** Digits, as Meta sends them. */
  readonly displayPhoneNumber: string
  readonly event: "FLAGGED" | "UNFLAGGED" | "DOWNGRADE" | "UPGRADE"
  readonly currentLimit: string
  readonly at: Date
}): Uint8Array =>
  accountEnvelope(options.businessAccountId, options.at, "phone_number_quality_update", {
    display_phone_number: options.displayPhoneNumber,
    event: options.event,
    current_limit: options.currentLimit
  })

/** `account_update` with `ACCOUNT_RESTRICTION`: what Meta restricts on a number now (none: lifted). */
export const restrictionPayload = (options: {
  readonly businessAccountId: string
  readonly phoneNumber: string
  readonly restrictions: ReadonlyArray<{ readonly type: string; readonly expiration: Date }>
  readonly at: Date
}): Uint8Array =>
  accountEnvelope(options.businessAccountId, options.at, "account_update", {
    phone_number: options.phoneNumber,
    event: "ACCOUNT_RESTRICTION",
    restriction_info: options.restrictions.map((r) => ({ restriction_type: r.type, expiration: seconds(r.expiration) }))
  })

/** `account_update` with `DISABLED_UPDATE`: Meta disables the business account, or reinstates it. */
export const banPayload = (options: {
  readonly businessAccountId: string
  readonly state: "DISABLE" | "REINSTATE" | "SCHEDULE_FOR_DISABLE"
  readonly at: Date
}): Uint8Array =>
  accountEnvelope(options.businessAccountId, options.at, "account_update", {
    event: "DISABLED_UPDATE",
    ban_info: { waba_ban_state: [options.state], waba_ban_date: options.at.toISOString().slice(0, 10) }
  })
