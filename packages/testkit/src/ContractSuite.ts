import type { Duration } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { isolationSuite, scopeSuite } from "./DescriptorSuites.ts"
import { makeAccount, nextPhone } from "./Fixtures.ts"
import { call } from "./Http.ts"
import type { ContractContext } from "./Slice.ts"
import * as Resources from "./Resources.ts"
import type { Target } from "./TestServer.ts"

export interface ContractTarget extends Target {
  /** A target whose clock the test can move also gets the 24 h idempotency expiry check. */
  readonly clock?: { readonly advance: (duration: Duration.Input) => void } | undefined
}

export interface SuiteOptions {
  /** Set when the target will have a `clock`: adds the tests that move time. */
  readonly movableClock?: boolean | undefined
}

type Mutable<A> = { -readonly [K in keyof A]: A[K] }

/**
 * The HTTP contract of Leadline (docs/contract.md), written once against a base URL
 * and an admin token: it runs on the in-memory wiring, on the SQL wirings and
 * against any live deployment. Each slice of `Resources.ts` brings its part; this
 * runner adds what no one resource owns (the request envelope) and the tests
 * generated from the descriptors (tenant isolation, scopes). Every test makes
 * its own accounts, so it leaves a live target's other data alone.
 */
export const contractSuite = (name: string, getTarget: () => ContractTarget, options: SuiteOptions = {}) =>
  describe(name, () => {
    const context = { options } as Mutable<ContractContext>

    beforeAll(async () => {
      context.target = getTarget()
      context.acme = await makeAccount(context.target, {
        name: "Acme",
        keys: {
          leadsRead: ["leads:read"],
          leadsWrite: ["leads:write"],
          analytics: ["analytics:read"],
          conversations: ["conversations:read"],
          mixed: ["leads:read", "analytics:read"]
        }
      })
      context.other = await makeAccount(context.target, { name: "Other" })
    })

    for (const slice of Resources.slices) slice.contract?.(context)

    describe("bad input", () => {
      const post = (options: Parameters<typeof call>[3]) =>
        call(context.target, "POST", "/api/v1/leads", { auth: context.acme.ownerKey, ...options })

      it("answers malformed JSON with 400 validation_error", async () => {
        const reply = await post({ raw: '{"name":', headers: { "content-type": "application/json" } })
        expect(reply.status).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(typeof reply.body.error).toBe("string")
      })

      it("answers a 2 MiB body with 413", async () => {
        const reply = await post({
          raw: JSON.stringify({ name: "x".repeat(2 * 1024 * 1024), phone: nextPhone() }),
          headers: { "content-type": "application/json" }
        })
        expect(reply.status).toBe(413)
        expect(reply.body).toEqual({
          error: "The request body is over the limit of 1048576 bytes",
          code: "payload_too_large"
        })
      })

      it("answers a form-encoded body with 415", async () => {
        const reply = await post({
          raw: "name=Ada&phone=%2B14155550100",
          headers: { "content-type": "application/x-www-form-urlencoded" }
        })
        expect(reply.status).toBe(415)
        expect(reply.body).toEqual({
          error: "The request body must be application/json",
          code: "unsupported_media_type"
        })
      })

      it("answers a declared non-JSON type with the JSON 415 even on an empty body", async () => {
        const reply = await post({ raw: "", headers: { "content-type": "text/plain" } })
        expect(reply.status).toBe(415)
        expect(reply.body.code).toBe("unsupported_media_type")
      })

      it("answers headers over 16 KiB with a JSON 431", async () => {
        const reply = await call(context.target, "GET", "/api/me", {
          auth: context.acme.ownerKey,
          headers: { "x-padding": "x".repeat(20_000) }
        })
        expect(reply.status).toBe(431)
        expect(reply.body).toEqual({ error: "The request headers are too large", code: "headers_too_large" })
        expect(reply.headers.get("x-request-id")).toMatch(/^req_/)
      })

      it("answers another +json media type with the JSON 415 too", async () => {
        const reply = await post({ raw: "{}", headers: { "content-type": "application/merge-patch+json" } })
        expect(reply.status).toBe(415)
        expect(reply.body.code).toBe("unsupported_media_type")
      })

      it("answers an unknown route with a JSON 404", async () => {
        const reply = await call(context.target, "GET", "/api/v1/nothing-here", { auth: context.acme.ownerKey })
        expect(reply.status).toBe(404)
        expect(reply.body).toEqual({ error: "No such route", code: "not_found" })
      })

      it("puts X-Request-Id on every response, success or error", async () => {
        const replies = [
          await call(context.target, "GET", "/api/me", { auth: context.acme.ownerKey }),
          await call(context.target, "GET", "/api/me"),
          await call(context.target, "GET", "/nowhere"),
          await post({ raw: "{", headers: { "content-type": "application/json" } })
        ]
        const ids = replies.map((reply) => reply.headers.get("x-request-id"))
        for (const id of ids) expect(id).toMatch(/^req_[0-9a-z]{26}$/)
        expect(new Set(ids).size).toBe(ids.length)
      })
    })

    // A live target cannot reach a receiver of the test's, so the cases that need one run in the security suite.
    isolationSuite(Resources.all, () => ({ target: context.target }), { receiver: false })
    scopeSuite(Resources.all, () => ({ target: context.target }))
  })
