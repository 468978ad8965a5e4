import * as Event from "../events/Event.ts"
import { Campaign } from "./Campaign.ts"

/** `POST …/queue` succeeded: the campaign as queued (`stats.total` set), or completed when every recipient was skipped. */
export const queued = Event.define("campaign.queued", Campaign, "campaigns.view")
/**
 * The campaign finished (§8.5): its last message left the queue, or every recipient was skipped at
 * queue time (then after `campaign.queued`, in the same transaction). Its stats as they are then.
 */
export const completed = Event.define("campaign.completed", Campaign, "campaigns.view")
