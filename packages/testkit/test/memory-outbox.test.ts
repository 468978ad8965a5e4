import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Outbox } from "@leadline/core/events/Outbox"
import { Transactor } from "@leadline/core/Transactor"
import { DeliveryQueue } from "@leadline/core/webhooks/DeliveryQueue"
import { WebhooksRepo } from "@leadline/core/webhooks/WebhooksRepo"
import * as MemoryStores from "@leadline/memory-adapter/MemoryStores"

const ACCOUNT = "00000000-0000-4000-8000-000000000001"

const event = (id: string) => ({
  id,
  type: "knowledge.updated" as const,
  created_at: new Date().toISOString(),
  account_id: ACCOUNT,
  data: { id: "kb_1" }
})

const subscribe = Effect.flatMap(WebhooksRepo, (repo) =>
  repo.insertEndpoint({
    id: "00000000-0000-4000-8000-0000000000e1",
    accountId: ACCOUNT,
    url: "https://hooks.example.com/memory",
    events: ["knowledge.updated"],
    description: null,
    retry_policy: "seed",
    enabled: true,
    created_at: new Date().toISOString(),
    secret: "whsec_x",
    previousSecret: null,
    previousSecretExpiresAt: null,
    failingSince: null
  })
)

const claimAll = Effect.flatMap(DeliveryQueue, (queue) => queue.claim("worker", Date.now() + 1000, 30_000, 100))

describe("the in-memory outbox", () => {
  it.effect("queues an event's deliveries only when its transaction commits", () =>
    Effect.gen(function* () {
      yield* subscribe
      const outbox = yield* Outbox
      const transactor = yield* Transactor
      // A worker polling while the transaction runs sees nothing yet; a rollback leaves nothing.
      let claimedMeanwhile: ReadonlyArray<unknown> | undefined
      const rolledBack = yield* Effect.exit(
        transactor.withTransaction(
          Effect.gen(function* () {
            yield* outbox.append([event("evt_rolled_back")])
            claimedMeanwhile = yield* claimAll
            return yield* Effect.fail("the change failed")
          })
        )
      )
      assert.deepStrictEqual(rolledBack, Exit.fail("the change failed"))
      assert.deepStrictEqual(claimedMeanwhile, [])
      assert.deepStrictEqual(yield* claimAll, [])

      yield* transactor.withTransaction(outbox.append([event("evt_committed")]))
      const claimed = yield* claimAll
      assert.deepStrictEqual(
        claimed.map((delivery) => delivery.eventId),
        ["evt_committed"]
      )
    }).pipe(Effect.provide(MemoryStores.layer))
  )
})
