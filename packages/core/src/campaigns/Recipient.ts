import { Schema } from "effect"
import { MessageError } from "../messages/Message.ts"

/** What a recipient's list can be filtered by, and the status each shows (docs/contract-messaging.md §8.2). */
export const RecipientStatus = Schema.Literals([
  "queued",
  "sent",
  "delivered",
  "read",
  "failed",
  "skipped",
  "cancelled"
]).annotate({ identifier: "CampaignRecipientStatus" })
export type RecipientStatus = typeof RecipientStatus.Type

/** One lead of a queued campaign's snapshot, as `GET …/recipients` lists it. */
export const Recipient = Schema.Struct({
  lead_id: Schema.String,
  phone: Schema.String.annotate({ description: "The lead's phone when the campaign was queued" }),
  status: RecipientStatus,
  message_id: Schema.NullOr(Schema.String).annotate({ description: "Its message; null when it was skipped" }),
  error: Schema.NullOr(MessageError).annotate({
    description:
      "Why it was skipped (`missing_template_value`, `opted_out`, `lead_deleted`) or why its message failed, with WhatsApp's code"
  }),
  updated_at: Schema.String
}).annotate({ identifier: "CampaignRecipient" })
export type Recipient = typeof Recipient.Type

/** A recipient as stored at queue time: its message, or why it has none. */
export interface Snapshot {
  readonly lead_id: string
  readonly phone: string
  readonly message_id: string | null
  /** Set when the recipient gets no message (`missing_template_value`, `opted_out`). */
  readonly skipped: { readonly code: string; readonly message: string } | null
  readonly created_at: string
}

/** The error a recipient whose lead was deleted after queueing shows: its message went with the lead. */
export const LEAD_DELETED = { code: "lead_deleted", message: "The lead was deleted after the campaign was queued" }

/**
 * A recipient as listed: skipped with its reason, skipped because its message is gone (the lead
 * was deleted), or as its message is. The SQL store states the same rule in its query.
 */
export const view = (
  snapshot: Snapshot,
  message: { readonly status: string; readonly error: Recipient["error"]; readonly updated_at: string } | undefined
): Recipient => {
  const base = { lead_id: snapshot.lead_id, phone: snapshot.phone, message_id: snapshot.message_id }
  if (snapshot.skipped !== null) {
    return {
      ...base,
      status: "skipped",
      error: { ...snapshot.skipped, provider_code: null },
      updated_at: snapshot.created_at
    }
  }
  if (message === undefined) {
    return {
      ...base,
      status: "skipped",
      error: { ...LEAD_DELETED, provider_code: null },
      updated_at: snapshot.created_at
    }
  }
  return { ...base, status: message.status as RecipientStatus, error: message.error, updated_at: message.updated_at }
}
