import { Schema } from "effect"
import { jsonProblem, Text } from "../Text.ts"

/** Meta's template states (docs/contract-messaging.md §8.7); an unknown one is kept as Meta spells it. */
export const STATUSES = [
  "APPROVED",
  "PENDING",
  "REJECTED",
  "PAUSED",
  "DISABLED",
  "IN_APPEAL",
  "PENDING_DELETION",
  "DELETED",
  "LIMIT_EXCEEDED"
] as const

export const CATEGORIES = ["MARKETING", "UTILITY", "AUTHENTICATION"] as const
export type Category = (typeof CATEGORIES)[number]

export const QUALITIES = ["GREEN", "YELLOW", "RED", "UNKNOWN"] as const

/** A WhatsApp message template of one language, as Leadline last learned it from Meta. */
export const MessageTemplate = Schema.Struct({
  id: Schema.String.annotate({ description: "`tpl_` followed by a sortable id" }),
  business_account_id: Schema.String.annotate({ description: "The WhatsApp Business Account (WABA) it belongs to" }),
  external_id: Schema.NullOr(Schema.String).annotate({ description: "Meta's id of the template (`hsm_id`)" }),
  name: Schema.String,
  language: Schema.String,
  category: Schema.String.annotate({ description: "MARKETING, UTILITY or AUTHENTICATION, as Meta says" }),
  status: Schema.String.annotate({ description: `Meta's status: ${STATUSES.join(", ")}` }),
  quality: Schema.String.annotate({ description: "GREEN, YELLOW, RED or UNKNOWN (Meta's quality score)" }),
  rejected_reason: Schema.NullOr(Schema.String),
  components: Schema.Array(Schema.Unknown).annotate({
    description: "As Meta holds them (HEADER, BODY, FOOTER, BUTTONS)"
  }),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotate({ identifier: "MessageTemplate" })
export type MessageTemplate = typeof MessageTemplate.Type

/** A template as Meta's list (or a create) gives it, before Leadline stores it. */
export interface GraphTemplate {
  readonly externalId: string
  readonly name: string
  readonly language: string
  readonly category: string
  readonly status: string
  readonly quality: string
  readonly rejectedReason: string | null
  readonly components: ReadonlyArray<unknown>
}

const PLACEHOLDER = /\{\{\s*(\d+)\s*\}\}/g

/** The distinct `{{n}}` of a text, as Meta numbers a template's parameters. */
export const placeholders = (text: string): ReadonlySet<number> =>
  new Set([...text.matchAll(PLACEHOLDER)].map((match) => Number(match[1])))

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const componentOf = (components: ReadonlyArray<unknown>, type: string): Record<string, unknown> | undefined =>
  components.find(
    (component): component is Record<string, unknown> =>
      isRecord(component) && typeof component.type === "string" && component.type.toUpperCase() === type
  )

/** How many parameters a template's BODY and text HEADER take. */
export const parameterCounts = (
  components: ReadonlyArray<unknown>
): { readonly body: number; readonly header: number } => {
  const count = (type: string) => {
    const component = componentOf(components, type)
    return component !== undefined && typeof component.text === "string" ? placeholders(component.text).size : 0
  }
  return { body: count("BODY"), header: count("HEADER") }
}

/** How many parameters a send gives its template's body and header (`components[].parameters`). */
export const givenCounts = (components: ReadonlyArray<unknown>): { readonly body: number; readonly header: number } => {
  const count = (type: string) => {
    const component = componentOf(components, type)
    return component !== undefined && Array.isArray(component.parameters) ? component.parameters.length : 0
  }
  return { body: count("BODY"), header: count("HEADER") }
}

const Name = Text.check(
  Schema.isPattern(/^[a-z0-9_]{1,512}$/, { message: "name must be 1 to 512 lower-case letters, digits or underscores" })
)
const Language = Text.check(
  Schema.isPattern(/^[a-z]{2,3}(_[A-Z]{2,4})?$/, { message: "language must look like en or en_US" })
)

// A string with a check rather than literals: HttpApi reports a literal's mismatch against the whole body.
const CategoryField = Schema.String.check(
  Schema.makeFilter(
    (category: string) =>
      (CATEGORIES as ReadonlyArray<string>).includes(category) || `category must be one of ${CATEGORIES.join(", ")}`
  )
)

const COMPONENT_TYPES = ["HEADER", "BODY", "FOOTER", "BUTTONS"]

/** Why a component cannot be sent to Meta as written, if it cannot (Meta's limits). */
const componentProblem = (component: Record<string, unknown>): string | undefined => {
  const problem = jsonProblem(component)
  if (problem !== undefined) return problem
  const type = component.type
  if (typeof type !== "string" || !COMPONENT_TYPES.includes(type)) {
    return `a component's type must be one of ${COMPONENT_TYPES.join(", ")}`
  }
  const text = component.text
  if (type === "BODY" && (typeof text !== "string" || text.length < 1 || text.length > 1024)) {
    return "a BODY needs a text of 1 to 1024 characters"
  }
  if (type === "FOOTER" && (typeof text !== "string" || text.length < 1 || text.length > 60)) {
    return "a FOOTER needs a text of 1 to 60 characters"
  }
  if (type === "HEADER") {
    const format = component.format ?? "TEXT"
    if (!["TEXT", "IMAGE", "VIDEO", "DOCUMENT", "LOCATION"].includes(String(format))) {
      return "a HEADER's format must be TEXT, IMAGE, VIDEO, DOCUMENT or LOCATION"
    }
    if (format === "TEXT" && (typeof text !== "string" || text.length < 1 || text.length > 60)) {
      return "a TEXT HEADER needs a text of 1 to 60 characters"
    }
  }
  if (type === "BUTTONS") {
    const buttons = component.buttons
    if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 10 || !buttons.every(isRecord)) {
      return "BUTTONS needs 1 to 10 button objects"
    }
  }
  if (typeof text === "string") {
    const numbers = [...placeholders(text)].sort((a, b) => a - b)
    if (numbers.some((n, i) => n !== i + 1)) return "placeholders must be {{1}}, {{2}}, … in order, none missing"
  }
  return undefined
}

const Component = Schema.Record(Schema.String, Schema.Unknown).check(
  Schema.makeFilter((component: Record<string, unknown>) => componentProblem(component) ?? true)
)

const Components = Schema.Array(Component).check(
  Schema.isMinLength(1, { message: "components must hold a BODY" }),
  Schema.isMaxLength(4, { message: "at most 4 components (HEADER, BODY, FOOTER, BUTTONS)" }),
  Schema.makeFilter((components: ReadonlyArray<Record<string, unknown>>) => {
    const types = components.map((component) => component.type)
    if (new Set(types).size !== types.length) return "each component type at most once"
    return types.includes("BODY") || "components must hold a BODY"
  }),
  Schema.makeFilter(
    (components: ReadonlyArray<Record<string, unknown>>) =>
      new TextEncoder().encode(JSON.stringify(components)).length <= 16 * 1024 ||
      "components must be at most 16 KiB of JSON"
  )
)

/** `POST /api/v1/templates`: submitted to Meta for review, in the WABA of the channel named (or the only one). */
export const CreateTemplate = Schema.Struct({
  channel_id: Schema.optional(
    Text.annotate({
      description: "A channel of the template's WABA; needed when the account has several active channels"
    })
  ),
  name: Name,
  language: Language,
  category: CategoryField.annotate({ description: CATEGORIES.join(", ") }),
  components: Components.annotate({
    description:
      "Meta's components: one BODY (`text`, `{{1}}`… with `example.body_text`), optional HEADER, FOOTER, BUTTONS"
  })
}).annotate({ identifier: "CreateTemplate" })
export type CreateTemplate = typeof CreateTemplate.Type

/** What `POST /api/v1/template-syncs` came to, per business account. */
export const SyncResult = Schema.Struct({
  business_accounts: Schema.Array(
    Schema.Struct({
      business_account_id: Schema.String,
      templates: Schema.Int.annotate({ description: "Templates Meta holds for it now" }),
      removed: Schema.Int.annotate({ description: "Templates Leadline held that Meta no longer has" })
    })
  ),
  templates: Schema.Int
}).annotate({ identifier: "TemplateSyncResult" })
export type SyncResult = typeof SyncResult.Type

/** A status or quality change Meta announced by webhook, for the template with Meta's id. */
export interface TemplateUpdate {
  readonly businessAccountId: string
  readonly externalId: string
  /** Meta's name and language of it: they find a template whose create has not recorded Meta's id yet. */
  readonly name?: string | undefined
  readonly language?: string | undefined
  readonly status?: string | undefined
  readonly rejectedReason?: string | null | undefined
  readonly quality?: string | undefined
  readonly category?: string | undefined
}
