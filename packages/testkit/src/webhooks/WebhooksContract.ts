import { describe, expect, it } from "vitest"
import { makeAccount } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { createLead } from "../leads/LeadsResource.ts"
import type { ContractContext } from "../Slice.ts"
import { deliveriesOf, registerEndpoint } from "./WebhooksResource.ts"

/** Changing an endpoint (docs/contract.md, "Webhooks"): the fields given, checked as at registration; pausing it. */
export const contract = (context: ContractContext) =>
  describe("webhook endpoints, changed", () => {
    const endpointPath = (id: string) => `/api/webhooks/endpoints?id=${id}`
    const listed = async (key: string, id: string) => {
      const reply = await call(context.target, "GET", "/api/webhooks/endpoints?limit=100", { auth: key })
      return reply.body.endpoints.find((endpoint: { id: string }) => endpoint.id === id)
    }

    it("changes the fields given and keeps the rest; never shows the secret", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const endpoint = await registerEndpoint(context, key, ["lead.created"])
      const before = await listed(key, endpoint.id)
      const patch = (json: unknown) => call(context.target, "PATCH", endpointPath(endpoint.id), { auth: key, json })
      const changed = await patch({ events: ["lead.created", "lead.updated"], description: "CRM sync" })
      expect(changed.status, changed.text).toBe(200)
      expect(changed.body).toEqual({ ...before, events: ["lead.created", "lead.updated"], description: "CRM sync" })
      expect(changed.body.secret).toBeUndefined()
      const cleared = await patch({ description: null })
      expect(cleared.body.description).toBeNull()
      expect(await listed(key, endpoint.id)).toEqual(cleared.body)
      const moved = await patch({ url: "https://hooks.example.com/leadline" })
      expect(moved.body.url).toBe("https://hooks.example.com/leadline")
    })

    it("keeps a retry policy per endpoint: seed unless asked, extended on request, changed by PATCH", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const plain = await registerEndpoint(context, key, ["lead.created"])
      expect((await listed(key, plain.id)).retry_policy).toBe("seed")
      const patient = await call(context.target, "POST", "/api/webhooks/endpoints", {
        auth: key,
        json: { url: "https://hooks.example.com/patient", events: ["lead.created"], retry_policy: "extended" }
      })
      expect(patient.status, patient.text).toBe(201)
      expect(patient.body.retry_policy).toBe("extended")
      const changed = await call(context.target, "PATCH", endpointPath(patient.body.id), {
        auth: key,
        json: { retry_policy: "seed" }
      })
      expect(changed.body.retry_policy).toBe("seed")
      const refused = await call(context.target, "POST", "/api/webhooks/endpoints", {
        auth: key,
        json: { url: "https://hooks.example.com/x", events: ["lead.created"], retry_policy: "forever" }
      })
      expect(refused.status).toBe(400)
      expect(refused.body.details.map((detail: { path: string }) => detail.path)).toContain("retry_policy")
    })

    it.each([
      [{ retry_policy: "daily" }, "retry_policy"],
      // Refused whatever WEBHOOK_ALLOW_PRIVATE_URLS says (a live target may allow private receivers).
      [{ url: "https://user:secret@hooks.example.com/hook" }, "url"],
      [{ url: "ftp://hooks.example.com/hook" }, "url"],
      [{ url: "not a url" }, "url"],
      [{ events: [] }, "events"],
      [{ events: ["lead.created", "lead.created"] }, "events"],
      [{ events: ["lead.nope"] }, "events.0"],
      [{ description: "x".repeat(501) }, "description"],
      [{ enabled: "no" }, "enabled"],
      [{ secret: "whsec_mine" }, "secret"]
    ])("refuses %j with a 400 naming %s, and changes nothing", async (json, path) => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const endpoint = await registerEndpoint(context, key, ["lead.created"])
      const before = await listed(key, endpoint.id)
      const reply = await call(context.target, "PATCH", endpointPath(endpoint.id), { auth: key, json })
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body.details.map((detail: { path: string }) => detail.path)).toContain(path)
      expect(await listed(key, endpoint.id)).toEqual(before)
    })

    it("answers 404 for an endpoint that is not there, deleted, or another account's", async () => {
      const account = await makeAccount(context.target)
      const other = await makeAccount(context.target)
      const theirs = await registerEndpoint(context, other.ownerKey)
      const gone = await registerEndpoint(context, account.ownerKey)
      expect((await call(context.target, "DELETE", endpointPath(gone.id), { auth: account.ownerKey })).status).toBe(200)
      for (const id of [crypto.randomUUID(), gone.id, theirs.id]) {
        const reply = await call(context.target, "PATCH", endpointPath(id), {
          auth: account.ownerKey,
          json: { description: "mine now" }
        })
        expect(reply.status).toBe(404)
        expect(reply.body).toEqual({ error: `No webhook endpoint with id ${id}`, code: "not_found" })
      }
    })

    it("delivers nothing new to a paused endpoint", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const endpoint = await registerEndpoint(context, key, ["lead.created"])
      const paused = await call(context.target, "PATCH", endpointPath(endpoint.id), {
        auth: key,
        json: { enabled: false }
      })
      expect(paused.body.enabled).toBe(false)
      await createLead(context.target, key)
      expect(await deliveriesOf(context, key, `?endpoint_id=${endpoint.id}`)).toEqual([])
      const resumed = await call(context.target, "PATCH", endpointPath(endpoint.id), {
        auth: key,
        json: { enabled: true }
      })
      expect(resumed.body.enabled).toBe(true)
      await createLead(context.target, key)
      expect(await deliveriesOf(context, key, `?endpoint_id=${endpoint.id}`)).toHaveLength(1)
    })
  })
