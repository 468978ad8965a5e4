import { Effect } from "effect"
import { Operator } from "@leadline/core/admin/Operator"
import { Authenticator } from "@leadline/core/auth/Authenticator"
import { CurrentPrincipal } from "@leadline/core/auth/Principal"
import { Leads } from "@leadline/core/leads/Leads"
import * as MemoryApp from "@leadline/memory-adapter/MemoryApp"

/**
 * Leadline's core inside your own app, without its HTTP server: the domain
 * services over a store wiring (here the in-memory one, `@leadline/memory-adapter`;
 * `@leadline/sql-adapter`'s `SqlApp.layer` gives PostgreSQL or PGlite instead). The
 * scope policy still applies: every call runs as a principal, here resolved from an API key.
 */
export const layer = MemoryApp.layer

/** Runs `effect` as the holder of `apiKey`, as the HTTP server would. */
export const asKey = <A, E, R>(apiKey: string, effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Authenticator, (authenticator) =>
    Effect.flatMap(authenticator.authenticate(apiKey), (principal) =>
      Effect.provideService(effect, CurrentPrincipal, principal)
    )
  )

/** An example flow: an account, a read-only key, a lead, and what each key may do. */
export const demo = Effect.gen(function* () {
  const operator = yield* Operator
  const leads = yield* Leads
  const account = yield* operator.createAccount({ name: "Embedded Ltd" })
  const reader = yield* operator.createKey(account.account_id, { name: "reports", scopes: ["leads:read"] })

  const lead = yield* asKey(account.api_key, leads.create({ name: "Ada Lovelace", phone: "+44 20 7946 0958" }))
  const page = yield* asKey(reader.api_key, leads.list({ limit: 10, offset: 0 }))
  const refused = yield* asKey(reader.api_key, leads.remove(lead.id)).pipe(Effect.flip)
  return { lead, page, refused }
})
