import { beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount, nextPhone } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { listedIds } from "../internal/wire.ts"
import type { Slice } from "../Slice.ts"

/** The OWASP check that is about idempotency keys; the runner (test/SecuritySuite.ts) places it under API1. */
export const security: Slice["security"] = {
  API1: (context) =>
    describe("idempotency keys", () => {
      let alice: AccountFixture
      let bob: AccountFixture

      beforeAll(async () => {
        alice = await makeAccount(context.target, { name: "Alice Ltd" })
        bob = await makeAccount(context.target, { name: "Bob Ltd" })
      })

      it("scopes Idempotency-Keys to the account: the same key from another account is not a replay", async () => {
        const key = `shared-${crypto.randomUUID()}`
        const json = { name: "Same Body", phone: nextPhone() }
        const first = await call(context.target, "POST", "/api/v1/leads", {
          auth: alice.ownerKey,
          json,
          headers: { "idempotency-key": key }
        })
        expect(first.status).toBe(201)
        const second = await call(context.target, "POST", "/api/v1/leads", {
          auth: bob.ownerKey,
          json,
          headers: { "idempotency-key": key }
        })
        expect(second.status).toBe(201)
        expect(second.headers.get("idempotent-replayed")).toBeNull()
        expect(second.body.id).not.toBe(first.body.id)
        expect(await listedIds(context.target, bob.ownerKey, "/api/v1/leads", "leads")).toContain(second.body.id)
      })
    })
}
