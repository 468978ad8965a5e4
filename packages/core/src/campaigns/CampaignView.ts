import type { OutboundStatus } from "../messages/StatusMerge.ts"
import type { Campaign } from "./Campaign.ts"
import * as CampaignStats from "./CampaignStats.ts"
import type { StoredCampaign } from "./CampaignsRepo.ts"

/**
 * The wire campaign: a draft's `audience_count` is who matches now; the stats of a queued one
 * come from its messages, and recipients without one (skipped at queue time, or whose lead was
 * deleted since) are what the snapshot's total leaves over.
 */
export const view = (
  stored: StoredCampaign,
  audienceCount: number | null,
  counts: Partial<Record<OutboundStatus, number>> | undefined,
  paused: Campaign["paused"]
): Campaign => {
  const messages = counts ?? {}
  const withMessages = Object.values(messages).reduce((sum, n) => sum + (n ?? 0), 0)
  // In the contract's order (§8.1), so a campaign reads the same in every answer and event.
  return {
    id: stored.id,
    name: stored.name,
    channel_id: stored.channel_id,
    template: stored.template,
    audience: stored.audience,
    scheduled_at: stored.scheduled_at,
    status: stored.status,
    audience_count: audienceCount,
    stats: CampaignStats.fromCounts({ messages, skipped: Math.max(0, stored.total - withMessages) }),
    error: stored.error,
    paused,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
    queued_at: stored.queued_at,
    started_at: stored.started_at,
    completed_at: stored.completed_at,
    cancelled_at: stored.cancelled_at
  }
}
