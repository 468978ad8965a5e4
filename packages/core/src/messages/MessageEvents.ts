import * as Event from "../events/Event.ts"
import { Message } from "./Message.ts"

export const received = Event.define("message.received", Message, "messages.view")
export const sent = Event.define("message.sent", Message, "messages.view")
export const statusChanged = Event.define("message.status_changed", Message, "messages.view")
