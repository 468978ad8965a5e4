import { assert, describe, it } from "@effect/vitest"
import { fromCounts } from "../../src/campaigns/CampaignStats.ts"

describe("campaign stats (docs/contract-messaging.md §8.1, §8.5)", () => {
  it("counts sent, delivered and read as a funnel, the rest as they stand, and adds up", () => {
    const stats = fromCounts({
      messages: { queued: 300, sent: 30, delivered: 440, read: 410, failed: 12, cancelled: 0 },
      skipped: 8
    })
    assert.deepStrictEqual(stats, {
      total: 1200,
      queued: 300,
      sent: 880,
      delivered: 850,
      read: 410,
      failed: 12,
      skipped: 8,
      cancelled: 0
    })
    assert.strictEqual(stats.total, stats.queued + stats.sent + stats.failed + stats.skipped + stats.cancelled)
  })

  it("is all zeros before anything is queued, and counts cancelled messages", () => {
    assert.deepStrictEqual(fromCounts({ messages: {}, skipped: 0 }), {
      total: 0,
      queued: 0,
      sent: 0,
      delivered: 0,
      read: 0,
      failed: 0,
      skipped: 0,
      cancelled: 0
    })
    assert.deepStrictEqual(fromCounts({ messages: { read: 2, cancelled: 5 }, skipped: 1 }), {
      total: 8,
      queued: 0,
      sent: 2,
      delivered: 2,
      read: 2,
      failed: 0,
      skipped: 1,
      cancelled: 5
    })
  })
})
