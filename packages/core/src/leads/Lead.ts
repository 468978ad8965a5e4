import { Schema } from "effect"
import { definedFields } from "../Patch.ts"
import { JsonObject, Text } from "../Text.ts"
import { PhoneNumber } from "./Phone.ts"

export const LeadStatus = Schema.Literals(["new", "contacted", "qualified", "won", "lost"]).annotate({
  identifier: "LeadStatus"
})
export type LeadStatus = typeof LeadStatus.Type

const Name = Text.check(
  Schema.isMinLength(1, { message: "name must not be empty" }),
  Schema.isMaxLength(200, { message: "name must be at most 200 characters" })
)

const Email = Text.check(
  Schema.isMaxLength(254, { message: "email must be at most 254 characters" }),
  Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: "email must be an email address" })
)

const Tag = Text.check(
  Schema.isMinLength(1, { message: "a tag must not be empty" }),
  Schema.isMaxLength(64, { message: "a tag must be at most 64 characters" })
)
const Tags = Schema.Array(Tag).check(Schema.isMaxLength(50, { message: "at most 50 tags" }))

const Attributes = JsonObject("attributes")

/**
 * The lead's refusal of marketing (docs/contract-messaging.md §8.6): when, how it came (a keyword the
 * lead sent on WhatsApp, or the API), and why. Campaigns skip such a lead; service replies still go.
 */
export const MarketingOptOut = Schema.Struct({
  at: Schema.String.annotate({ description: "When the lead opted out" }),
  source: Schema.Literals(["whatsapp_keyword", "api"]).annotate({
    description: "`whatsapp_keyword`: the lead sent one of the account's opt-out keywords; `api`: set through the API"
  }),
  reason: Schema.NullOr(Schema.String).annotate({
    description: "The keyword the lead sent, or the reason given through the API"
  })
}).annotate({ identifier: "MarketingOptOut" })
export type MarketingOptOut = typeof MarketingOptOut.Type

const OptOutReason = Text.check(Schema.isMaxLength(500, { message: "reason must be at most 500 characters" }))

/** What a create or PATCH sets: the lead opts out now, with an optional reason; `null` (PATCH) opts it back in. */
export const SetMarketingOptOut = Schema.Struct({
  reason: Schema.optional(Schema.NullOr(OptOutReason))
}).annotate({ identifier: "SetMarketingOptOut" })
export type SetMarketingOptOut = typeof SetMarketingOptOut.Type

/** The stored opt-out for what a body set: `at` now, from the API. */
export const optOutFromApi = (input: SetMarketingOptOut, now: string): MarketingOptOut => ({
  at: now,
  source: "api",
  reason: input.reason ?? null
})

export const Lead = Schema.Struct({
  id: Schema.String.annotate({ description: "`ld_` followed by a sortable id" }),
  name: Schema.String,
  phone: Schema.String.annotate({ description: "E.164" }),
  email: Schema.NullOr(Schema.String),
  tags: Schema.Array(Schema.String),
  status: LeadStatus,
  assigned_user_id: Schema.NullOr(Schema.String),
  attributes: Schema.Record(Schema.String, Schema.Unknown),
  marketing_opt_out: Schema.NullOr(MarketingOptOut).annotate({
    description: "Null, or when and why the lead refused marketing: campaigns skip it (docs §8.6)"
  }),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotate({ identifier: "Lead" })
export type Lead = typeof Lead.Type

// Fields a caller may set on create and change on update; name and phone are
// required on create only.
const settable = {
  email: Schema.optional(Schema.NullOr(Email)),
  tags: Schema.optional(Tags),
  status: Schema.optional(LeadStatus),
  assigned_user_id: Schema.optional(Schema.NullOr(Schema.String)),
  attributes: Schema.optional(Attributes),
  marketing_opt_out: Schema.optional(Schema.NullOr(SetMarketingOptOut))
}

export const CreateLead = Schema.Struct({ name: Name, phone: PhoneNumber, ...settable }).annotate({
  identifier: "CreateLead"
})
export type CreateLead = typeof CreateLead.Type

/** A lead as the API creates it, from a decoded body: what the body leaves out takes its default. */
/**
 * `current` with the fields a body sets (those given; `updated_at` now). `marketing_opt_out` set opts
 * the lead out now, `null` opts it back in; with `keepFirstOptOut` (an import) a lead already opted
 * out keeps its first opt-out, as a keyword's does.
 */
export const withChanges = (
  current: Lead,
  input: { readonly [K in Exclude<keyof Lead, "marketing_opt_out">]?: Lead[K] | undefined } & {
    readonly marketing_opt_out?: SetMarketingOptOut | null | undefined
  },
  now: string,
  keepFirstOptOut = false
): Lead => {
  const { marketing_opt_out: optOut, ...fields } = input
  return {
    ...current,
    ...definedFields(fields),
    marketing_opt_out:
      optOut === undefined
        ? current.marketing_opt_out
        : optOut === null
          ? null
          : keepFirstOptOut && current.marketing_opt_out !== null
            ? current.marketing_opt_out
            : optOutFromApi(optOut, now),
    updated_at: now
  }
}

export const fromInput = (id: string, input: CreateLead, now: string): Lead => ({
  id,
  name: input.name,
  phone: input.phone,
  email: input.email ?? null,
  tags: input.tags ?? [],
  status: input.status ?? "new",
  assigned_user_id: input.assigned_user_id ?? null,
  attributes: input.attributes ?? {},
  marketing_opt_out:
    input.marketing_opt_out === undefined || input.marketing_opt_out === null
      ? null
      : optOutFromApi(input.marketing_opt_out, now),
  created_at: now,
  updated_at: now
})

/** The longest name a lead may have (the API's limit), which a WhatsApp profile name is cut to. */
const MAX_NAME = 200

/**
 * A lead for a number that wrote in on WhatsApp: named by the profile name it sent (cut to the
 * API's limit), else by the number. WhatsApp is the authority that the number exists: no
 * validity check here.
 */
export const fromWhatsApp = (id: string, waId: string, profileName: string | null | undefined, now: string): Lead => {
  const phone = `+${waId}`
  return fromInput(id, { name: (profileName ?? phone).slice(0, MAX_NAME) || phone, phone }, now)
}

export const UpdateLead = Schema.Struct({
  name: Schema.optional(Name),
  phone: Schema.optional(PhoneNumber),
  ...settable
}).annotate({ identifier: "UpdateLead" })
export type UpdateLead = typeof UpdateLead.Type

export const DeletedLead = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotate({
  identifier: "DeletedLead"
})
