import type { OutboundStatus } from "../messages/StatusMerge.ts"
import type { CampaignStats as Stats } from "./Campaign.ts"

/**
 * A campaign's stats (docs/contract-messaging.md §8.1, the `CampaignStats` schema of Campaign.ts):
 * `queued`, `failed`, `skipped` and `cancelled` are current counts, `sent`, `delivered` and
 * `read` a funnel ("reached at least"), and `total = queued + sent + failed + skipped + cancelled`
 * always.
 */
export type CampaignStats = typeof Stats.Type

/** What the stats are computed from (§8.5): the campaign's messages by status, and its recipients without one. */
export interface Counts {
  readonly messages: Partial<Record<OutboundStatus, number>>
  /** Recipients skipped at queue time (no message: `missing_template_value`, `lead_deleted`). */
  readonly skipped: number
}

/** No stored counters to drift: the stats are read from the messages each time. */
export const fromCounts = ({ messages, skipped }: Counts): CampaignStats => {
  const count = (status: OutboundStatus) => messages[status] ?? 0
  const read = count("read")
  const delivered = read + count("delivered")
  const sent = delivered + count("sent")
  const queued = count("queued")
  const failed = count("failed")
  const cancelled = count("cancelled")
  return {
    total: queued + sent + failed + skipped + cancelled,
    queued,
    sent,
    delivered,
    read,
    failed,
    skipped,
    cancelled
  }
}
