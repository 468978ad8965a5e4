import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Operator } from "@leadline/core/admin/Operator"
import { Authenticator } from "@leadline/core/auth/Authenticator"
import { CurrentPrincipal } from "@leadline/core/auth/Principal"
import { Leads } from "@leadline/core/leads/Leads"
import { Transactor } from "@leadline/core/Transactor"
import * as MemoryApp from "@leadline/memory-adapter/MemoryApp"
import { RecordedEvents } from "@leadline/memory-adapter/webhooks/MemoryWebhooks"

/** An account's owner as the current principal, through the real operator and authenticator. */
const asNewOwner = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const created = yield* (yield* Operator).createAccount({ name: "Acme" })
    const principal = yield* (yield* Authenticator).authenticate(created.api_key)
    return yield* Effect.provideService(effect, CurrentPrincipal, principal)
  })

describe("Leads (core service over the memory stores)", () => {
  it.effect("records lead.created and lead.deleted with the lead as data", () =>
    asNewOwner(
      Effect.gen(function* () {
        const leads = yield* Leads
        const lead = yield* leads.create({ name: "Ada", phone: "+14155550100" })
        yield* leads.remove(lead.id)
        const events = yield* (yield* RecordedEvents).all
        assert.deepStrictEqual(
          events.map((event) => [event.type, event.data]),
          [
            ["lead.created", lead],
            ["lead.deleted", lead]
          ]
        )
        const principal = yield* CurrentPrincipal
        for (const event of events) {
          assert.match(event.id, /^evt_[0-9a-z]{26}$/)
          assert.strictEqual(event.account_id, principal.accountId)
        }
      })
    ).pipe(Effect.provide(MemoryApp.layer))
  )

  it.effect("records nothing for a create that conflicts", () =>
    asNewOwner(
      Effect.gen(function* () {
        const leads = yield* Leads
        yield* leads.create({ name: "Ada", phone: "+14155550100" })
        const conflict = yield* Effect.flip(leads.create({ name: "Bob", phone: "+14155550100" }))
        assert.strictEqual(conflict._tag, "Conflict")
        assert.strictEqual((yield* (yield* RecordedEvents).all).length, 1)
      })
    ).pipe(Effect.provide(MemoryApp.layer))
  )

  it.effect("rolls back the lead and its event when the surrounding transaction fails", () =>
    asNewOwner(
      Effect.gen(function* () {
        const leads = yield* Leads
        const transactor = yield* Transactor
        const failed = yield* Effect.flip(
          transactor.withTransaction(
            Effect.flatMap(leads.create({ name: "Ada", phone: "+14155550100" }), () =>
              Effect.fail("later step failed" as const)
            )
          )
        )
        assert.strictEqual(failed, "later step failed")
        assert.strictEqual((yield* leads.list({ limit: 10, offset: 0 })).meta.total, 0)
        assert.strictEqual((yield* (yield* RecordedEvents).all).length, 0)
        // The phone is free again: nothing of the failed create remains.
        const lead = yield* leads.create({ name: "Ada", phone: "+14155550100" })
        assert.strictEqual(lead.phone, "+14155550100")
      })
    ).pipe(Effect.provide(MemoryApp.layer))
  )
})
