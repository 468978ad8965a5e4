/**
 * Meta's WhatsApp webhook body, read tolerantly: bytes in, the items we act on out.
 * It never throws and never rejects a whole batch for one bad item (frappe_whatsapp
 * PR#252, botpress PR#15083): what it cannot interpret goes to `skipped` with a
 * reason and the rest is kept. The builders write bodies the way Meta does, for the
 * simulator that plays Meta.
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

export interface Skipped {
  readonly reason: string
  readonly item: unknown
}

export type Parsed =
  | { readonly _tag: "Ignored"; readonly reason: string }
  | { readonly _tag: "Changes"; readonly changes: ReadonlyArray<Change>; readonly skipped: ReadonlyArray<Skipped> }

/** Meta documents wamids of at most 128 characters; a longer one would not fit our column. */
export const MAX_EXTERNAL_ID_LENGTH = 128

const MEDIA_TYPES: ReadonlySet<string> = new Set(["image", "audio", "video", "document", "sticker"])
const CAPTIONED_TYPES: ReadonlySet<string> = new Set(["image", "video", "document", "sticker"])
const STATUSES: ReadonlySet<string> = new Set<DeliveryStatus>(["sent", "delivered", "read", "failed"])

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const field = (value: unknown, key: string): unknown => (isObject(value) ? value[key] : undefined)

const string = (value: unknown): string | null => (typeof value === "string" ? value : null)

const nonEmpty = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null)

const integer = (value: unknown): number | null => (typeof value === "number" && Number.isInteger(value) ? value : null)

const array = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

/** Meta's timestamps are unix seconds, as a string (a number is accepted too). */
const unixSeconds = (value: unknown): Date | null => {
  const seconds =
    typeof value === "string" && /^\d{1,12}$/.test(value) ? Number(value) : typeof value === "number" ? value : NaN
  if (!Number.isFinite(seconds) || seconds < 0) return null
  const date = new Date(seconds * 1000)
  return Number.isNaN(date.getTime()) ? null : date
}

const messageError = (value: unknown): MessageError | null => {
  if (!isObject(value)) return null
  return {
    code: "provider_error",
    message:
      nonEmpty(value.title) ??
      nonEmpty(value.message) ??
      nonEmpty(field(value.error_data, "details")) ??
      "The provider reported an error",
    provider_code: integer(value.code)
  }
}

const providerError = (value: unknown): ProviderError => ({
  code: integer(field(value, "code")),
  title: string(field(value, "title")),
  message: string(field(value, "message")) ?? string(field(field(value, "error_data"), "details"))
})

/** What the customer wrote: Chatwoot's extraction (incoming_message_service_helpers.rb). */
const textOf = (item: Json, type: string): string | null =>
  nonEmpty(field(item.text, "body")) ??
  (CAPTIONED_TYPES.has(type) ? nonEmpty(field(item[type], "caption")) : null) ??
  nonEmpty(field(item.button, "text")) ??
  nonEmpty(field(field(item.interactive, "button_reply"), "title")) ??
  nonEmpty(field(field(item.interactive, "list_reply"), "title")) ??
  nonEmpty(field(item.reaction, "emoji"))

const mediaOf = (item: Json, type: string): InboundMedia | null => {
  if (!MEDIA_TYPES.has(type)) return null
  const media = item[type]
  const id = nonEmpty(field(media, "id"))
  if (id === null) return null
  return {
    provider_media_id: id,
    mime_type: string(field(media, "mime_type")),
    sha256: string(field(media, "sha256")),
    filename: string(field(media, "filename"))
  }
}

const badId = (id: string | null): string | null =>
  id === null ? "missing id" : id.length > MAX_EXTERNAL_ID_LENGTH ? "id longer than 128 characters" : null

type Outcome<A> = { readonly ok: A } | { readonly skip: string }

const readMessage = (item: unknown, contacts: ReadonlyArray<unknown>): Outcome<InboundMessage> => {
  if (!isObject(item)) return { skip: "message is not an object" }
  const id = nonEmpty(item.id)
  const idProblem = badId(id)
  if (idProblem !== null) return { skip: `message ${idProblem}` }
  const from = nonEmpty(item.from)
  if (from === null) return { skip: "message without from" }
  const timestamp = unixSeconds(item.timestamp)
  if (timestamp === null) return { skip: "message without a valid timestamp" }
  const type = nonEmpty(item.type) ?? "unknown"
  const contact = contacts.find((candidate) => field(candidate, "wa_id") === from)
  return {
    ok: {
      externalId: id!,
      from,
      profileName: nonEmpty(field(field(contact, "profile"), "name")),
      timestamp,
      type,
      text: textOf(item, type),
      media: mediaOf(item, type),
      payload: item,
      error: messageError(array(item.errors)[0])
    }
  }
}

const readStatus = (item: unknown): Outcome<StatusUpdate> => {
  if (!isObject(item)) return { skip: "status is not an object" }
  const id = nonEmpty(item.id)
  const idProblem = badId(id)
  if (idProblem !== null) return { skip: `status ${idProblem}` }
  const status = string(item.status)
  if (status === null) return { skip: "status without status" }
  // Meta adds statuses over time (`played`, `deleted`, …); none moves an outbound message.
  if (!STATUSES.has(status)) return { skip: `status "${status}" is not modelled` }
  const timestamp = unixSeconds(item.timestamp)
  if (timestamp === null) return { skip: "status without a valid timestamp" }
  return {
    ok: {
      externalId: id!,
      status: status as DeliveryStatus,
      timestamp,
      recipientId: nonEmpty(item.recipient_id),
      callbackData: string(item.biz_opaque_callback_data),
      error: messageError(array(item.errors)[0])
    }
  }
}

const readItems = <A>(
  value: Json,
  key: string,
  read: (item: unknown) => Outcome<A>,
  skipped: Array<Skipped>
): ReadonlyArray<A> => {
  const items = value[key]
  if (items === undefined) return []
  if (!Array.isArray(items)) {
    skipped.push({ reason: `value.${key} is not an array`, item: items })
    return []
  }
  const kept: Array<A> = []
  for (const item of items) {
    const outcome = read(item)
    if ("ok" in outcome) kept.push(outcome.ok)
    else skipped.push({ reason: outcome.skip, item })
  }
  return kept
}

const readChange = (change: unknown, skipped: Array<Skipped>): Change | null => {
  if (!isObject(change)) {
    skipped.push({ reason: "change is not an object", item: change })
    return null
  }
  if (change.field !== "messages") {
    skipped.push({ reason: `field "${String(change.field)}" is not handled`, item: change })
    return null
  }
  const value = change.value
  const phoneNumberId = isObject(value) ? nonEmpty(field(value.metadata, "phone_number_id")) : null
  if (!isObject(value) || phoneNumberId === null) {
    skipped.push({ reason: "change without value.metadata.phone_number_id", item: change })
    return null
  }
  const contacts = array(value.contacts)
  return {
    phoneNumberId,
    displayPhoneNumber: string(field(value.metadata, "display_phone_number")),
    messages: readItems(value, "messages", (item) => readMessage(item, contacts), skipped),
    statuses: readItems(value, "statuses", readStatus, skipped),
    errors: readItems(value, "errors", (item) => ({ ok: providerError(item) }), skipped)
  }
}

// Not fatal: Meta escapes every non-ASCII character, so a stray byte is better replaced than fatal.
const decoder = new TextDecoder("utf-8")

/** Reads a webhook body. Decides nothing about channels: the caller routes by `phoneNumberId`. */
export const parse = (raw: Uint8Array): Parsed => {
  let body: unknown
  try {
    body = JSON.parse(decoder.decode(raw))
  } catch {
    return { _tag: "Ignored", reason: "body is not JSON" }
  }
  if (field(body, "object") !== "whatsapp_business_account") {
    return { _tag: "Ignored", reason: 'object is not "whatsapp_business_account"' }
  }
  const entries = field(body, "entry")
  if (!Array.isArray(entries)) return { _tag: "Ignored", reason: "no entry array" }
  const changes: Array<Change> = []
  const skipped: Array<Skipped> = []
  for (const entry of entries) {
    const entryChanges = field(entry, "changes")
    if (!Array.isArray(entryChanges)) {
      skipped.push({ reason: "entry without a changes array", item: entry })
      continue
    }
    for (const change of entryChanges) {
      const read = readChange(change, skipped)
      if (read !== null) changes.push(read)
    }
  }
  return { _tag: "Changes", changes, skipped }
}

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

/** A customer's text message, as Meta delivers it. */
export interface InboundTextOptions {
  readonly from: string
  readonly name: string | null
  readonly text: string
  readonly externalId: string
  readonly timestamp: Date
}

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
