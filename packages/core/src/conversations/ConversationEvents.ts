import * as Event from "../events/Event.ts"
import { pending } from "../events/Outbox.ts"
import { Conversation } from "./Conversation.ts"

/** A thread began: a lead wrote first, or a send to a lead opened one. */
export const created = Event.define("conversation.created", Conversation, "conversations.view")
/** Its assignee changed (`previous_attributes.assigned_user_id` was the one before). */
export const assigned = Event.define("conversation.assigned", Conversation, "conversations.view")
/**
 * Its status changed, by a person (PATCH), by the lead writing into a thread that was not open, or
 * by a snooze running out (`previous_attributes.status` was the one before).
 */
export const statusChanged = Event.define("conversation.status_changed", Conversation, "conversations.view")

/**
 * What a change of a thread tells (docs/contract-messaging.md §9): `conversation.assigned` when its
 * assignee changed, `conversation.status_changed` when its status did, each with what it was.
 */
export const changeEvents = (before: Conversation, after: Conversation) => [
  ...(before.assigned_user_id === after.assigned_user_id
    ? []
    : [pending(assigned, after, { assigned_user_id: before.assigned_user_id })]),
  ...(before.status === after.status
    ? []
    : [
        pending(statusChanged, after, {
          status: before.status,
          ...(before.snoozed_until === after.snoozed_until ? {} : { snoozed_until: before.snoozed_until })
        })
      ])
]
