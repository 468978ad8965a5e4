import { assert, describe, it } from "@effect/vitest"
import { type Delivery, type Incoming, merge, type OutboundStatus } from "../src/messages/StatusMerge.ts"

const T1 = "2026-11-23T10:16:40.000Z"
const T2 = "2026-11-23T10:16:44.000Z"
const T3 = "2026-11-23T10:16:50.000Z"

const queued: Delivery = {
  status: "queued",
  error: null,
  sent_at: null,
  delivered_at: null,
  read_at: null,
  failed_at: null
}

const error131047 = { code: "provider_error", message: "Re-engagement message", provider_code: 131047 }
const outcomeUnknown = { code: "outcome_unknown", message: "The provider did not answer", provider_code: null }

const sent = (at: string): Incoming => ({ status: "sent", at, error: null })
const delivered = (at: string): Incoming => ({ status: "delivered", at, error: null })
const read = (at: string): Incoming => ({ status: "read", at, error: null })
const failed = (at: string, error: Incoming["error"] = error131047): Incoming => ({ status: "failed", at, error })

/** Applies statuses in order, as the webhook handler would. */
const apply = (start: Delivery, ...incoming: ReadonlyArray<Incoming>): Delivery =>
  incoming.reduce((current, status) => {
    const result = merge(current, status)
    return result.changed ? result.next : current
  }, start)

const next = (current: Delivery, incoming: Incoming): { next: Delivery; accepted: boolean } => {
  const result = merge(current, incoming)
  assert.isTrue(result.changed)
  if (!result.changed) throw new Error("unreachable")
  return { next: result.next, accepted: result.accepted }
}

describe("forward moves (higher rank is taken)", () => {
  it("queued → sent records acceptance and sent_at", () => {
    assert.deepStrictEqual(next(queued, sent(T1)), {
      next: { ...queued, status: "sent", sent_at: T1 },
      accepted: true
    })
  })

  it("sent → delivered → read, each *_at set once, acceptance only the first time", () => {
    const atSent = apply(queued, sent(T1))
    assert.deepStrictEqual(next(atSent, delivered(T2)), {
      next: { ...queued, status: "delivered", sent_at: T1, delivered_at: T2 },
      accepted: false
    })
    const atDelivered = apply(atSent, delivered(T2))
    assert.deepStrictEqual(next(atDelivered, read(T3)), {
      next: { ...queued, status: "read", sent_at: T1, delivered_at: T2, read_at: T3 },
      accepted: false
    })
  })

  it("read before delivered (Meta skips delivered): read, with delivered_at and sent_at filled", () => {
    assert.deepStrictEqual(next(apply(queued, sent(T1)), read(T3)), {
      next: { ...queued, status: "read", sent_at: T1, delivered_at: T3, read_at: T3 },
      accepted: false
    })
  })

  it("queued straight to delivered or read is an acceptance and fills the earlier steps", () => {
    assert.deepStrictEqual(next(queued, delivered(T2)), {
      next: { ...queued, status: "delivered", sent_at: T2, delivered_at: T2 },
      accepted: true
    })
    assert.deepStrictEqual(next(queued, read(T3)), {
      next: { ...queued, status: "read", sent_at: T3, delivered_at: T3, read_at: T3 },
      accepted: true
    })
  })

  it("a timestamp already set is kept", () => {
    const oddlySet: Delivery = { ...queued, status: "sent", sent_at: T1, delivered_at: T1 }
    assert.strictEqual(next(oddlySet, delivered(T2)).next.delivered_at, T1)
  })
})

describe("same or lower rank is ignored", () => {
  const atSent = apply(queued, sent(T1))
  const atDelivered = apply(atSent, delivered(T2))
  const atRead = apply(atDelivered, read(T3))

  it("duplicates and late arrivals change nothing", () => {
    assert.deepStrictEqual(merge(atSent, sent(T2)), { changed: false })
    assert.deepStrictEqual(merge(atDelivered, sent(T3)), { changed: false })
    assert.deepStrictEqual(merge(atDelivered, delivered(T3)), { changed: false })
    assert.deepStrictEqual(merge(atRead, sent(T3)), { changed: false })
    assert.deepStrictEqual(merge(atRead, delivered(T3)), { changed: false })
    assert.deepStrictEqual(merge(atRead, read(T3)), { changed: false })
  })

  it("read, then delivered, then sent (contract §6.5 order) ends read with delivered_at set", () => {
    const final = apply(apply(queued, sent(T1)), read(T3), delivered(T2), sent(T1))
    assert.deepStrictEqual(final, { ...queued, status: "read", sent_at: T1, delivered_at: T3, read_at: T3 })
  })
})

describe("failed", () => {
  it("from queued or sent: failed with the status's error and failed_at", () => {
    assert.deepStrictEqual(next(queued, failed(T2)), {
      next: { ...queued, status: "failed", error: error131047, failed_at: T2 },
      accepted: false
    })
    const atSent = apply(queued, sent(T1))
    assert.deepStrictEqual(next(atSent, failed(T2)), {
      next: { ...atSent, status: "failed", error: error131047, failed_at: T2 },
      accepted: false
    })
  })

  it("without errors[] gets a provider_error that says so", () => {
    assert.deepStrictEqual(next(queued, failed(T2, null)).next.error, {
      code: "provider_error",
      message: "The provider reported the message as failed",
      provider_code: null
    })
  })

  it("from delivered or read is ignored", () => {
    const atDelivered = apply(queued, sent(T1), delivered(T2))
    assert.deepStrictEqual(merge(atDelivered, failed(T3)), { changed: false })
    const atRead = apply(queued, read(T2))
    assert.deepStrictEqual(merge(atRead, failed(T3)), { changed: false })
  })

  it("read, then failed: still read", () => {
    const final = apply(queued, sent(T1), read(T2), failed(T3))
    assert.strictEqual(final.status, "read")
    assert.isNull(final.error)
    assert.isNull(final.failed_at)
  })

  it("a provider failure is final: nothing moves it", () => {
    const providerFailed = apply(queued, failed(T1))
    for (const incoming of [sent(T2), delivered(T2), read(T2), failed(T3, outcomeUnknown)]) {
      assert.deepStrictEqual(merge(providerFailed, incoming), { changed: false })
    }
  })
})

describe("outcome_unknown revival", () => {
  const unknown: Delivery = { ...queued, status: "failed", error: outcomeUnknown, failed_at: T1 }

  it("sent, delivered or read: taken, error and failed_at cleared, acceptance recorded", () => {
    assert.deepStrictEqual(next(unknown, sent(T2)), {
      next: { ...queued, status: "sent", sent_at: T2 },
      accepted: true
    })
    assert.deepStrictEqual(next(unknown, delivered(T2)), {
      next: { ...queued, status: "delivered", sent_at: T2, delivered_at: T2 },
      accepted: true
    })
    assert.deepStrictEqual(next(unknown, read(T3)), {
      next: { ...queued, status: "read", sent_at: T3, delivered_at: T3, read_at: T3 },
      accepted: true
    })
  })

  it("only once: after the revival the usual ranks apply and acceptance is not repeated", () => {
    const revived = apply(unknown, sent(T2))
    assert.deepStrictEqual(merge(revived, sent(T2)), { changed: false })
    assert.isFalse(next(revived, delivered(T3)).accepted)
  })

  it("a failed status does not replace our outcome_unknown", () => {
    assert.deepStrictEqual(merge(unknown, failed(T2)), { changed: false })
  })
})

describe("our own outcome_unknown after WhatsApp's sent (its status came before the send's answer)", () => {
  it("changes nothing: the message stays sent, and is not announced a second time by a later status", () => {
    const atSent = apply(queued, sent(T1))
    assert.deepStrictEqual(merge(atSent, failed(T2, outcomeUnknown)), { changed: false })
    const then = apply(atSent, failed(T2, outcomeUnknown), delivered(T3))
    assert.deepStrictEqual(then, { ...queued, status: "delivered", sent_at: T1, delivered_at: T3 })
    assert.isFalse(next(apply(atSent, failed(T2, outcomeUnknown)), delivered(T3)).accepted)
  })

  it("still fails a message WhatsApp never said it took, and WhatsApp's own failure after sent", () => {
    assert.deepStrictEqual(next(queued, failed(T2, outcomeUnknown)).next, {
      ...queued,
      status: "failed",
      error: outcomeUnknown,
      failed_at: T2
    })
    const atSent = apply(queued, sent(T1))
    assert.strictEqual(next(atSent, failed(T2)).next.status, "failed")
  })
})

describe("cancelled ignores everything", () => {
  it("no status moves a cancelled message", () => {
    const cancelled: Delivery = { ...queued, status: "cancelled" }
    for (const incoming of [sent(T1), delivered(T1), read(T1), failed(T1), failed(T1, null)]) {
      assert.deepStrictEqual(merge(cancelled, incoming), { changed: false })
    }
  })
})

describe("acceptance is recorded exactly once along any path", () => {
  it("every order of sent/delivered/read from queued yields one accepted merge", () => {
    const statuses = [sent(T1), delivered(T2), read(T3)]
    const orders = [
      [0, 1, 2],
      [0, 2, 1],
      [1, 0, 2],
      [1, 2, 0],
      [2, 0, 1],
      [2, 1, 0]
    ]
    for (const order of orders) {
      let current = queued
      let acceptances = 0
      for (const index of order) {
        const result = merge(current, statuses[index]!)
        if (result.changed) {
          if (result.accepted) acceptances++
          current = result.next
        }
      }
      assert.strictEqual(acceptances, 1, order.join(","))
      assert.strictEqual(current.status satisfies OutboundStatus, "read", order.join(","))
      assert.isNotNull(current.sent_at)
      assert.isNotNull(current.delivered_at)
    }
  })
})
