import * as Event from "../events/Event.ts"
import { Message } from "./Message.ts"

export const received = Event.define("message.received", Message)
export const sent = Event.define("message.sent", Message)
export const statusChanged = Event.define("message.status_changed", Message)
