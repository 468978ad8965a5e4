import { Duration } from "effect"
import { describe, expect, it } from "vitest"
import { makeAccount, nextPhone } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { postLead } from "../leads/LeadsResource.ts"
import type { ContractContext } from "../Slice.ts"

/** Idempotency-Key on a creating POST (leads'): replay, reuse, limits, namespace, concurrency, expiry. */
export const contract = (context: ContractContext) => {
  const createLead = (key: string, body: Record<string, unknown> = {}, headers?: Record<string, string>) =>
    postLead(context.target, key, body, headers)

  describe("idempotency", () => {
    it("replays the original response for the same key: same status, same body, marked", async () => {
      const body = { name: "Replay", phone: nextPhone() }
      const headers = { "idempotency-key": `replay-${crypto.randomUUID()}` }
      const first = await call(context.target, "POST", "/api/v1/leads", {
        auth: context.acme.ownerKey,
        json: body,
        headers
      })
      const second = await call(context.target, "POST", "/api/v1/leads", {
        auth: context.acme.ownerKey,
        json: body,
        headers
      })
      expect(first.status).toBe(201)
      expect(first.headers.get("idempotent-replayed")).toBeNull()
      expect(second.status).toBe(201)
      expect(second.text).toBe(first.text)
      expect(second.headers.get("idempotent-replayed")).toBe("true")
      expect(second.headers.get("content-type")).toBe("application/json")
    })

    it("refuses the same key with another body (422)", async () => {
      const headers = { "idempotency-key": `reuse-${crypto.randomUUID()}` }
      expect((await createLead(context.acme.ownerKey, {}, headers)).status).toBe(201)
      const reused = await createLead(context.acme.ownerKey, {}, headers)
      expect(reused.status).toBe(422)
      expect(reused.body).toEqual({
        error: "This Idempotency-Key was already used with a different method, path or body",
        code: "idempotency_key_reused"
      })
    })

    it("accepts a 200-character key and refuses a 201-character one", async () => {
      expect((await createLead(context.acme.ownerKey, {}, { "idempotency-key": "k".repeat(200) })).status).toBe(201)
      const tooLong = await createLead(context.acme.ownerKey, {}, { "idempotency-key": "k".repeat(201) })
      expect(tooLong.status).toBe(400)
      expect(tooLong.body.code).toBe("validation_error")
    })

    it("shares a namespace between the keys of one account, not between accounts", async () => {
      const body = { name: "Shared", phone: nextPhone() }
      const headers = { "idempotency-key": `ns-${crypto.randomUUID()}` }
      const byOwner = await call(context.target, "POST", "/api/v1/leads", {
        auth: context.acme.ownerKey,
        json: body,
        headers
      })
      expect(byOwner.status).toBe(201)
      const byWriter = await call(context.target, "POST", "/api/v1/leads", {
        auth: context.acme.keys.leadsWrite!.apiKey,
        json: body,
        headers
      })
      expect(byWriter.headers.get("idempotent-replayed")).toBe("true")
      expect(byWriter.body.id).toBe(byOwner.body.id)
      const elsewhere = await call(context.target, "POST", "/api/v1/leads", {
        auth: context.other.ownerKey,
        json: body,
        headers
      })
      expect(elsewhere.status).toBe(201)
      expect(elsewhere.headers.get("idempotent-replayed")).toBeNull()
      expect(elsewhere.body.id).not.toBe(byOwner.body.id)
    })

    it("stores a 4xx answer too: a replayed conflict stays a conflict", async () => {
      const phone = nextPhone()
      expect((await createLead(context.acme.ownerKey, { phone })).status).toBe(201)
      const headers = { "idempotency-key": `conflict-${crypto.randomUUID()}` }
      const first = await createLead(context.acme.ownerKey, { phone, name: "Clash" }, headers)
      const again = await createLead(context.acme.ownerKey, { phone, name: "Clash" }, headers)
      expect(first.status).toBe(409)
      expect(again.status).toBe(409)
      expect(again.text).toBe(first.text)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
    })

    it("executes 20 parallel requests with one key once", async () => {
      const fixture = await makeAccount(context.target, { name: "Parallel" })
      const body = { name: "Once", phone: nextPhone() }
      const headers = { "idempotency-key": `parallel-${crypto.randomUUID()}` }
      const replies = await Promise.all(
        Array.from({ length: 20 }, () =>
          call(context.target, "POST", "/api/v1/leads", { auth: fixture.ownerKey, json: body, headers })
        )
      )
      const created = replies.filter((reply) => reply.status === 201)
      const inProgress = replies.filter((reply) => reply.status === 409)
      expect(created.length + inProgress.length).toBe(20)
      expect(created.length).toBeGreaterThanOrEqual(1)
      expect(new Set(created.map((reply) => reply.body.id)).size).toBe(1)
      expect(created.filter((reply) => reply.headers.get("idempotent-replayed") === null)).toHaveLength(1)
      for (const reply of inProgress) {
        expect(reply.body.code).toBe("idempotency_in_progress")
        expect(reply.headers.get("retry-after")).toBe("1")
      }
      const list = await call(context.target, "GET", "/api/v1/leads", { auth: fixture.ownerKey })
      expect(list.body.meta.total).toBe(1)
    })

    // Defined only where time can be moved, so a live target shows no skipped test.
    if (context.options.movableClock === true)
      it("forgets a key after 24 hours", async () => {
        if (context.target.clock === undefined) throw new Error("movableClock was set but the target has no clock")
        const body = { name: "Expiring", phone: nextPhone() }
        const headers = { "idempotency-key": `expiry-${crypto.randomUUID()}` }
        const first = await call(context.target, "POST", "/api/v1/leads", {
          auth: context.acme.ownerKey,
          json: body,
          headers
        })
        expect(first.status).toBe(201)
        context.target.clock.advance(Duration.hours(23))
        const within = await call(context.target, "POST", "/api/v1/leads", {
          auth: context.acme.ownerKey,
          json: body,
          headers
        })
        expect(within.headers.get("idempotent-replayed")).toBe("true")
        context.target.clock.advance(Duration.hours(1))
        const after = await call(context.target, "POST", "/api/v1/leads", {
          auth: context.acme.ownerKey,
          json: body,
          headers
        })
        // The key is free again, so the create runs anew and meets the lead it made the first time.
        expect(after.status).toBe(409)
        expect(after.headers.get("idempotent-replayed")).toBeNull()
      })
  })
}
