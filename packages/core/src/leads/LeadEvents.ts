import * as Event from "../events/Event.ts"
import { Lead } from "./Lead.ts"

export const created = Event.define("lead.created", Lead, "leads.view")
/** Any change of a lead's fields, with `previous_attributes`: the old values of exactly those that changed. */
export const updated = Event.define("lead.updated", Lead, "leads.view")
export const deleted = Event.define("lead.deleted", Lead, "leads.view")
