import type { TemplateUpdate } from "@leadline/core/templates/Template"

/**
 * Meta's template webhooks on the WABA (docs/contract-messaging.md §8.7): `entry[].id` is the WABA,
 * `changes[].field` one of `TEMPLATE_FIELDS`. Read tolerantly, as `MetaWebhook.parse` reads
 * messages: a change it cannot use is left out, never refused.
 */

export const TEMPLATE_FIELDS: ReadonlySet<string> = new Set([
  "message_template_status_update",
  "message_template_quality_update",
  "template_category_update"
])

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const idOf = (value: unknown): string | null =>
  typeof value === "string" && value !== "" ? value : typeof value === "number" ? String(value) : null

const word = (value: unknown): string | undefined =>
  typeof value === "string" && /^[A-Z_]{1,40}$/.test(value) ? value : undefined

/** Whether a change is one of the template fields (the message parser skips it; this reads it). */
export const isTemplateChange = (change: unknown): boolean =>
  isObject(change) && typeof change.field === "string" && TEMPLATE_FIELDS.has(change.field)

/** A status event as the status it leaves the template in: REINSTATED is APPROVED again; FLAGGED moves only quality. */
const statusUpdate = (value: Json): Partial<TemplateUpdate> | undefined => {
  const event = word(value.event)
  if (event === undefined) return undefined
  if (event === "FLAGGED") return { quality: "RED" }
  const status = event === "REINSTATED" ? "APPROVED" : event
  const reason = typeof value.reason === "string" && value.reason !== "NONE" ? value.reason : null
  return {
    status,
    rejectedReason: status === "REJECTED" || status === "PAUSED" || status === "DISABLED" ? reason : null
  }
}

const readChange = (businessAccountId: string, change: Json): TemplateUpdate | undefined => {
  const value = change.value
  if (!isObject(value)) return undefined
  const externalId = idOf(value.message_template_id)
  if (externalId === null) return undefined
  const what =
    change.field === "message_template_status_update"
      ? statusUpdate(value)
      : change.field === "message_template_quality_update"
        ? (() => {
            const quality = word(value.new_quality_score)
            return quality === undefined ? undefined : { quality }
          })()
        : (() => {
            const category = word(value.new_category) ?? word(value.correct_category)
            return category === undefined ? undefined : { category }
          })()
  if (what === undefined) return undefined
  const name = typeof value.message_template_name === "string" ? value.message_template_name : undefined
  const language = typeof value.message_template_language === "string" ? value.message_template_language : undefined
  return { ...what, businessAccountId, externalId, name, language }
}

const decoder = new TextDecoder("utf-8")

/** The template changes of a webhook body, in order; none when it has none or is not Meta's JSON. */
export const parse = (raw: Uint8Array): ReadonlyArray<TemplateUpdate> => {
  let body: unknown
  try {
    body = JSON.parse(decoder.decode(raw))
  } catch {
    return []
  }
  if (!isObject(body) || body.object !== "whatsapp_business_account" || !Array.isArray(body.entry)) return []
  const updates: Array<TemplateUpdate> = []
  for (const entry of body.entry) {
    const businessAccountId = isObject(entry) ? idOf(entry.id) : null
    if (businessAccountId === null || !isObject(entry) || !Array.isArray(entry.changes)) continue
    for (const change of entry.changes) {
      if (!isTemplateChange(change)) continue
      const update = readChange(businessAccountId, change as Json)
      if (update !== undefined) updates.push(update)
    }
  }
  return updates
}

const encoder = new TextEncoder()

/** A change of one template, as Meta posts it on the WABA (for the simulator and tests). */
export type TemplateChange =
  | {
      readonly field: "message_template_status_update"
      readonly event: string
      readonly reason?: string | null | undefined
    }
  | { readonly field: "message_template_quality_update"; readonly previous: string; readonly quality: string }
  | { readonly field: "template_category_update"; readonly previous: string; readonly category: string }

/** Meta's template webhook body for `changes` of templates of one WABA. */
export const templatesPayload = (
  businessAccountId: string,
  changes: ReadonlyArray<
    TemplateChange & { readonly externalId: string; readonly name: string; readonly language: string }
  >,
  timestamp: Date
): Uint8Array =>
  encoder.encode(
    JSON.stringify({
      object: "whatsapp_business_account",
      entry: [
        {
          id: businessAccountId,
          time: Math.floor(timestamp.getTime() / 1000),
          changes: changes.map((change) => {
            const template = {
              message_template_id: Number.isSafeInteger(Number(change.externalId))
                ? Number(change.externalId)
                : change.externalId,
              message_template_name: change.name,
              message_template_language: change.language
            }
            if (change.field === "message_template_status_update") {
              return {
                field: change.field,
                value: { event: change.event, ...template, reason: change.reason ?? "NONE" }
              }
            }
            if (change.field === "message_template_quality_update") {
              return {
                field: change.field,
                value: { previous_quality_score: change.previous, new_quality_score: change.quality, ...template }
              }
            }
            return {
              field: change.field,
              value: { ...template, previous_category: change.previous, new_category: change.category }
            }
          })
        }
      ]
    })
  )
