import type {
  Change,
  DeliveryStatus,
  HealthUpdate,
  InboundMedia,
  InboundMessage,
  MessageError,
  ProviderError,
  StatusUpdate
} from "@leadline/core/whatsapp/InboundBatch"

/**
 * Meta's WhatsApp webhook body, read tolerantly: bytes in, core's typed batch out.
 * It never throws and never rejects a whole batch for one bad item (frappe_whatsapp
 * PR#252, botpress PR#15083): what it cannot interpret goes to `skipped` with a
 * reason and the rest is kept. Only a body that is no WhatsApp webhook at all, or a
 * batch far larger than Meta sends, is `Malformed` (docs/contract-messaging.md §6.1).
 */

export interface Skipped {
  readonly reason: string
  readonly item: unknown
}

export type Parsed =
  | { readonly _tag: "Malformed"; readonly reason: string }
  | {
      readonly _tag: "Changes"
      readonly changes: ReadonlyArray<Change>
      /** Meta's account webhooks about numbers' health (quality, limits, restrictions). */
      readonly health: ReadonlyArray<HealthUpdate>
      readonly skipped: ReadonlyArray<Skipped>
    }

/**
 * The most entries, changes and items (messages, statuses, errors) one body may hold, counted
 * together: Meta batches at most 1,000 updates, so ten times that is never a delivery of its.
 */
export const MAX_BATCH_ITEMS = 10_000

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

/** The wamid a message answers (`context.id`: a reply, a button or list choice) or a reaction is about. */
const repliedWamid = (item: Json, type: string): string | null => {
  const wamid =
    (type === "reaction" ? nonEmpty(field(item.reaction, "message_id")) : null) ?? nonEmpty(field(item.context, "id"))
  return wamid !== null && wamid.length <= MAX_EXTERNAL_ID_LENGTH ? wamid : null
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
      error: messageError(array(item.errors)[0]),
      repliesTo: repliedWamid(item, type)
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

/** A `waba_ban_state` as Meta sends it: a string, or an array of one. */
const banState = (value: unknown): string | null => string(value) ?? string(array(value)[0])

/**
 * `phone_number_quality_update` and `account_update` (docs/contract-messaging.md §3.1): what they say
 * of the numbers' health, or a reason to skip it. Events that say nothing of it (a name review, a
 * partner added) are skipped.
 */
const readHealth = (businessAccountId: string, at: Date, change: Json): Outcome<HealthUpdate> => {
  const value = change.value
  if (!isObject(value)) return { skip: `${String(change.field)} without a value` }
  const event = string(value.event)
  if (change.field === "phone_number_quality_update") {
    const phoneNumber = nonEmpty(value.display_phone_number)
    if (phoneNumber === null) return { skip: "phone_number_quality_update without display_phone_number" }
    const tier = nonEmpty(value.current_limit)
    const quality = event === "FLAGGED" ? "red" : event === "UNFLAGGED" ? "yellow" : undefined
    return {
      ok: {
        businessAccountId,
        phoneNumber: phoneNumber.replace(/\D/g, ""),
        at,
        ...(quality === undefined ? {} : { quality }),
        ...(tier === null ? {} : { tier })
      }
    }
  }
  const phoneNumber = nonEmpty(value.phone_number)
  const target = { businessAccountId, phoneNumber: phoneNumber === null ? null : phoneNumber.replace(/\D/g, ""), at }
  if (event === "ACCOUNT_RESTRICTION") {
    const restrictions = array(value.restriction_info).flatMap((item) => {
      const type = nonEmpty(field(item, "restriction_type"))
      return type === null ? [] : [{ type, until: unixSeconds(field(item, "expiration")) }]
    })
    return { ok: { ...target, restrictions } }
  }
  if (event === "DISABLED_UPDATE") {
    const state = banState(field(value.ban_info, "waba_ban_state"))
    if (state === "DISABLE") return { ok: { ...target, disabled: true } }
    if (state === "REINSTATE") return { ok: { ...target, disabled: false } }
    return { skip: `account_update DISABLED_UPDATE with waba_ban_state ${JSON.stringify(state)} is not modelled` }
  }
  return { skip: `account_update event ${JSON.stringify(event)} is not modelled` }
}

const HEALTH_FIELDS: ReadonlySet<string> = new Set(["phone_number_quality_update", "account_update"])

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

const ITEM_KEYS = ["messages", "statuses", "errors"] as const

/** Entries, changes and items of a body, stopping once past `MAX_BATCH_ITEMS`. */
const batchSize = (entries: ReadonlyArray<unknown>): number => {
  let count = entries.length
  for (const entry of entries) {
    if (count > MAX_BATCH_ITEMS) break
    for (const change of array(field(entry, "changes"))) {
      count += 1
      const value = field(change, "value")
      for (const key of ITEM_KEYS) count += array(field(value, key)).length
    }
  }
  return count
}

/** Reads a webhook body. Decides nothing about channels: the caller routes by `phoneNumberId`. */
export const parse = (raw: Uint8Array): Parsed => {
  let body: unknown
  try {
    body = JSON.parse(decoder.decode(raw))
  } catch {
    return { _tag: "Malformed", reason: "not JSON" }
  }
  const object = field(body, "object")
  if (typeof object !== "string" || object === "") {
    return { _tag: "Malformed", reason: 'object is not "whatsapp_business_account"' }
  }
  // Meta's own webhook for another product (a Page's, Instagram's) sent to this URL: acknowledged
  // and skipped, since Meta retries what is refused and may switch off a callback that keeps failing.
  if (object !== "whatsapp_business_account") {
    return {
      _tag: "Changes",
      changes: [],
      health: [],
      skipped: [{ reason: `a webhook of "${object}", not WhatsApp's`, item: { object } }]
    }
  }
  const entries = field(body, "entry")
  if (!Array.isArray(entries)) return { _tag: "Malformed", reason: "entry is not an array" }
  if (batchSize(entries) > MAX_BATCH_ITEMS) {
    return { _tag: "Malformed", reason: `more than ${MAX_BATCH_ITEMS} entries, changes and items in one batch` }
  }
  const changes: Array<Change> = []
  const health: Array<HealthUpdate> = []
  const skipped: Array<Skipped> = []
  for (const entry of entries) {
    const entryChanges = field(entry, "changes")
    if (!Array.isArray(entryChanges)) {
      skipped.push({ reason: "entry without a changes array", item: entry })
      continue
    }
    for (const change of entryChanges) {
      if (isObject(change) && typeof change.field === "string" && HEALTH_FIELDS.has(change.field)) {
        const businessAccountId = nonEmpty(field(entry, "id"))
        if (businessAccountId === null) {
          skipped.push({ reason: `${change.field} without the business account's entry id`, item: change })
          continue
        }
        const outcome = readHealth(businessAccountId, unixSeconds(field(entry, "time")) ?? new Date(), change)
        if ("ok" in outcome) health.push(outcome.ok)
        else skipped.push({ reason: outcome.skip, item: change })
        continue
      }
      const read = readChange(change, skipped)
      if (read !== null) changes.push(read)
    }
  }
  return { _tag: "Changes", changes, health, skipped }
}
