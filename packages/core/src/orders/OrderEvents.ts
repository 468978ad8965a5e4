import * as Event from "../events/Event.ts"
import { Order } from "./Order.ts"

export const created = Event.define("order.created", Order, "orders.view")
/** One per change of `status` and/or `payment_status`, with `previous_attributes`. */
export const statusChanged = Event.define("order.status_changed", Order, "orders.view")
