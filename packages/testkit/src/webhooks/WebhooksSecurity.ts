import { beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { listedIds as listedIdsOf, neverIssued, notFound } from "../internal/wire.ts"
import * as Leads from "../leads/LeadsResource.ts"
import * as Resource from "../Resource.ts"
import type { Admits, SecurityContext, Slice } from "../Slice.ts"
import * as Webhooks from "./WebhooksResource.ts"

/** The OWASP checks that are about webhooks; the runner (test/SecuritySuite.ts) places them under their item. */

/** The keys each webhooks route admits, as the contract has them: the full-access key only, whatever its scopes would be. */
export const admits: Admits = {
  "POST /api/webhooks/endpoints": ["full access"],
  "GET /api/webhooks/endpoints": ["full access"],
  "PATCH /api/webhooks/endpoints": ["full access"],
  "POST /api/webhooks/endpoints/rotate-secret": ["full access"],
  "POST /api/webhooks/endpoints/recover": ["full access"],
  "DELETE /api/webhooks/endpoints": ["full access"],
  "GET /api/webhooks/deliveries": ["full access"],
  "POST /api/webhooks/deliveries/redeliver": ["full access"]
}

const helpers = (context: SecurityContext) => ({
  createLead: (owner: AccountFixture, fields: Record<string, unknown> = {}) =>
    Leads.createLead(context.target, owner.ownerKey, fields),
  registerEndpoint: async (owner: AccountFixture, events?: ReadonlyArray<string>) => {
    const registered = await Webhooks.registerEndpoint(context, owner.ownerKey, events)
    // The security suite has a receiver, so every endpoint has one.
    return { ...registered, endpoint: registered.endpoint! }
  },
  deliveriesOf: (owner: AccountFixture, query?: string) => Webhooks.deliveriesOf(context, owner.ownerKey, query),
  makeDelivery: async (owner: AccountFixture) => {
    const made = await Webhooks.makeDelivery(context, owner.ownerKey)
    return { ...made, endpoint: { ...made.endpoint, endpoint: made.endpoint.endpoint! } }
  },
  listedIds: (owner: AccountFixture, path: string, field: string) =>
    listedIdsOf(context.target, owner.ownerKey, path, field)
})

export const security: Slice["security"] = {
  API1: (context) =>
    describe("webhooks", () => {
      // Alice owns the endpoint and the delivery; Bob, with full access to his own account, tries to reach them.
      const { createLead, registerEndpoint, deliveriesOf, makeDelivery, listedIds } = helpers(context)
      let alice: AccountFixture
      let bob: AccountFixture
      let aliceEndpoint: Awaited<ReturnType<typeof registerEndpoint>>
      let aliceDelivery: Webhooks.DeliveryView
      let bobEndpoint: Awaited<ReturnType<typeof registerEndpoint>>

      beforeAll(async () => {
        alice = await makeAccount(context.target, { name: "Alice Ltd" })
        bob = await makeAccount(context.target, { name: "Bob Ltd" })
        // Bob listens to the same event type: he must still never hear of Alice's leads.
        bobEndpoint = await registerEndpoint(bob, ["lead.created"])
        const made = await makeDelivery(alice)
        aliceEndpoint = made.endpoint
        aliceDelivery = made.delivery
      })

      const bobCalls = (method: string, path: string, json?: unknown) =>
        call(context.target, method, path, { auth: bob.ownerKey, ...(json === undefined ? {} : { json }) })

      it("GET /api/webhooks/deliveries?endpoint_id= of another account finds nothing, as for an id never issued", async () => {
        // A filter rather than a lookup: the server answers an empty page (not 404) both for an
        // endpoint of another account and for one that never existed, so the answer reveals nothing.
        const reply = await bobCalls("GET", `/api/webhooks/deliveries?endpoint_id=${aliceEndpoint.id}`)
        expect(reply.status).toBe(200)
        expect(reply.body).toEqual({
          deliveries: [],
          meta: { limit: 50, offset: 0, total: 0, has_more: false, next_offset: null }
        })
        const neverReply = await bobCalls("GET", `/api/webhooks/deliveries?endpoint_id=${crypto.randomUUID()}`)
        expect(neverReply.text).toBe(reply.text)
      })

      it("POST /api/webhooks/deliveries/redeliver?id= of another account is 404 and sends nothing", async () => {
        const reply = await bobCalls("POST", `/api/webhooks/deliveries/redeliver?id=${aliceDelivery.id}`)
        expect(reply.status).toBe(404)
        expect(reply.body).toEqual(notFound("delivery", aliceDelivery.id))

        const never = neverIssued("dlv")
        const neverReply = await bobCalls("POST", `/api/webhooks/deliveries/redeliver?id=${never}`)
        expect(neverReply.text.replace(never, aliceDelivery.id)).toBe(reply.text)

        // Nothing was queued again (a redelivery would show at once in the log), and after a
        // round of the worker (a third account's event reached its receiver) nothing went out.
        const [after] = await deliveriesOf(alice, `?endpoint_id=${aliceEndpoint.id}`)
        expect(after).toEqual(aliceDelivery)
        const carol = await makeAccount(context.target, { name: "Carol Ltd" })
        const carolEndpoint = await registerEndpoint(carol, ["lead.created"])
        await createLead(carol)
        await carolEndpoint.endpoint.waitFor(1)
        expect(aliceEndpoint.endpoint.requests()).toHaveLength(1)
      })

      it("never lists another account's leads, endpoints, deliveries or events", async () => {
        const bobLead = await createLead(bob)
        await bobEndpoint.endpoint.waitFor(1)

        expect(await listedIds(bob, "/api/v1/leads", "leads")).toEqual([bobLead.id])
        expect(await listedIds(bob, "/api/webhooks/endpoints", "endpoints")).toEqual([bobEndpoint.id])
        const bobDeliveries = await deliveriesOf(bob)
        expect(bobDeliveries.map((delivery) => delivery.id)).not.toContain(aliceDelivery.id)
        expect(bobDeliveries.map((delivery) => delivery.event_id)).not.toContain(aliceDelivery.event_id)
        // Bob's receiver heard of his own lead only, although Alice's lead.created came first.
        expect(bobEndpoint.endpoint.requests().map((request) => JSON.parse(request.body).data.id)).toEqual([bobLead.id])
      })
    }),

  API3: (context) =>
    describe("webhooks", () => {
      const { makeDelivery, listedIds } = helpers(context)
      let account: AccountFixture
      let other: AccountFixture

      beforeAll(async () => {
        account = await makeAccount(context.target)
        other = await makeAccount(context.target)
      })

      const forged = { created_at: "2000-01-01T00:00:00.000Z" }

      it("refuses a caller-chosen webhook secret, id, owner or state at registration", async () => {
        const reply = await call(context.target, "POST", "/api/webhooks/endpoints", {
          auth: account.ownerKey,
          json: {
            url: Resource.receiverUrl(context, "/chosen-secret"),
            events: ["order.created"],
            secret: "whsec_chosen",
            id: crypto.randomUUID(),
            enabled: false,
            account_id: other.accountId,
            created_at: forged.created_at
          }
        })
        expect(reply.status).toBe(400)
        expect(reply.body.details.map((detail: { path: string }) => detail.path).sort()).toEqual(
          ["account_id", "created_at", "enabled", "id", "secret"].sort()
        )
        expect(await listedIds(account, "/api/webhooks/endpoints", "endpoints")).toEqual([])
      })

      it("shows a webhook secret in the registration answer only: not in lists, logs, deletions or deliveries", async () => {
        const { endpoint, lead, delivery } = await makeDelivery(account)
        const texts = [
          (await call(context.target, "GET", "/api/webhooks/endpoints", { auth: account.ownerKey })).text,
          (await call(context.target, "GET", "/api/webhooks/deliveries", { auth: account.ownerKey })).text,
          (
            await call(context.target, "POST", `/api/webhooks/deliveries/redeliver?id=${delivery.id}`, {
              auth: account.ownerKey
            })
          ).text,
          (await call(context.target, "GET", `/api/v1/leads/${lead.id}`, { auth: account.ownerKey })).text,
          (await call(context.target, "GET", "/api/me", { auth: account.ownerKey })).text,
          ...endpoint.endpoint.requests().map((request) => request.body),
          (
            await call(context.target, "DELETE", `/api/webhooks/endpoints?id=${endpoint.id}`, {
              auth: account.ownerKey
            })
          ).text
        ]
        expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
        for (const text of texts) {
          expect(text).not.toContain(endpoint.secret)
          expect(text).not.toContain("whsec_")
          expect(text).not.toContain('"secret"')
        }
      })
    })
}
