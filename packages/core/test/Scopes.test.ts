import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { authorize, CurrentPrincipal, type Principal } from "../src/auth/Principal.ts"
import * as Scopes from "../src/auth/Scopes.ts"

const principal = (scopes: ReadonlyArray<Scopes.Scope>): Principal => ({
  accountId: "acc",
  userId: "user",
  ownerUserId: "user",
  role: "owner",
  keyId: "key",
  scopes
})

describe("scope policy", () => {
  it("maps each scope to the permissions of docs/contract.md", () => {
    assert.deepStrictEqual(Scopes.permissionsOf(["leads:write"]), [
      "leads.assign",
      "leads.create",
      "leads.delete",
      "leads.update",
      "leads.view"
    ])
    assert.deepStrictEqual(Scopes.permissionsOf(["messages:send"]), [
      "conversations.view",
      "messages.send",
      "messages.view"
    ])
    assert.deepStrictEqual(Scopes.permissionsOf(["knowledge:write"]), [
      "knowledge.delete",
      "knowledge.upload",
      "knowledge.view"
    ])
    assert.deepStrictEqual(Scopes.permissionsOf(["ai:use"]), ["ai.use"])
    assert.strictEqual(Scopes.SCOPES.length, 16)
  })

  it("gives a key without scopes every permission, including the full-access-only ones", () => {
    const all = Scopes.permissionsOf([])
    assert.strictEqual(all.length, 25)
    assert.isTrue(all.includes("webhooks.manage"))
    assert.isTrue(all.includes("catalogue.manage"))
    assert.deepStrictEqual([...all].sort(), all)
  })

  it("lets a write scope read the same resource", () => {
    assert.isTrue(Scopes.allows(["orders:write"], "orders.view"))
    assert.isTrue(Scopes.allows(["campaigns:send"], "campaigns.view"))
    assert.isFalse(Scopes.allows(["orders:read"], "orders.update"))
  })

  it("names the narrowest scope, or full access, for a missing permission", () => {
    assert.strictEqual(Scopes.requirementFor("conversations.view"), "conversations:read")
    assert.strictEqual(Scopes.requirementFor("messages.send"), "messages:send")
    assert.strictEqual(Scopes.requirementFor("leads.view"), "leads:read")
    assert.strictEqual(Scopes.requirementFor("leads.delete"), "leads:write")
    assert.strictEqual(Scopes.requirementFor("webhooks.manage"), "full access")
    assert.strictEqual(Scopes.requirementFor("catalogue.manage"), "full access")
  })

  it.effect("authorize fails with the requirement a 403 names", () =>
    Effect.gen(function* () {
      const denied = yield* Effect.flip(
        authorize("webhooks.manage").pipe(Effect.provideService(CurrentPrincipal, principal(["leads:write"])))
      )
      assert.strictEqual(denied._tag, "PermissionDenied")
      assert.strictEqual(denied.required, "full access")
      const allowed = yield* authorize("leads.view").pipe(
        Effect.provideService(CurrentPrincipal, principal(["leads:write"]))
      )
      assert.strictEqual(allowed.keyId, "key")
    })
  )
})
