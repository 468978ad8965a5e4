import * as Event from "../events/Event.ts"
import { Lead } from "./Lead.ts"

export const created = Event.define("lead.created", Lead)
export const deleted = Event.define("lead.deleted", Lead)
