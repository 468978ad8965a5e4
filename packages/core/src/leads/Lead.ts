import { Schema } from "effect"
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

export const Lead = Schema.Struct({
  id: Schema.String.annotate({ description: "`ld_` followed by a sortable id" }),
  name: Schema.String,
  phone: Schema.String.annotate({ description: "E.164" }),
  email: Schema.NullOr(Schema.String),
  tags: Schema.Array(Schema.String),
  status: LeadStatus,
  assigned_user_id: Schema.NullOr(Schema.String),
  attributes: Schema.Record(Schema.String, Schema.Unknown),
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
  attributes: Schema.optional(Attributes)
}

export const CreateLead = Schema.Struct({ name: Name, phone: PhoneNumber, ...settable }).annotate({
  identifier: "CreateLead"
})
export type CreateLead = typeof CreateLead.Type

/** A lead as the API creates it, from a decoded body: what the body leaves out takes its default. */
export const fromInput = (id: string, input: CreateLead, now: string): Lead => ({
  id,
  name: input.name,
  phone: input.phone,
  email: input.email ?? null,
  tags: input.tags ?? [],
  status: input.status ?? "new",
  assigned_user_id: input.assigned_user_id ?? null,
  attributes: input.attributes ?? {},
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
