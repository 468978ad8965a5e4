import * as Event from "../events/Event.ts"
import { Campaign } from "./Campaign.ts"

/** `POST …/queue` succeeded: the campaign as queued (`stats.total` set), or completed when every recipient was skipped. */
export const queued = Event.define("campaign.queued", Campaign)
