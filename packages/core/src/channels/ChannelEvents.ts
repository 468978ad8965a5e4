import * as Event from "../events/Event.ts"
import { Channel } from "./Channel.ts"

/**
 * Meta changed what it says of a number (docs/contract-messaging.md §3.1): its quality rating,
 * messaging limit or restrictions. The channel as it is now, `previous_attributes` the health
 * fields that changed. Read with `conversations.view`, as channels are.
 */
export const healthChanged = Event.define("channel.health_changed", Channel, "conversations.view")
