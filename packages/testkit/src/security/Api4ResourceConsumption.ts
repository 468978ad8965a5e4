import { beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount, nextPhone } from "../Fixtures.ts"
import { call } from "../Http.ts"
import type { Kit } from "./Kit.ts"

/** The suite's API4 checks, over the shared kit. */
export const api4ResourceConsumption = (kit: Kit) => {
  const { server, sliceChecks, API_ROUTES } = kit
  describe("API4 unrestricted resource consumption", () => {
    const LIMIT = 1024 * 1024
    const TOO_LARGE = { error: `The request body is over the limit of ${LIMIT} bytes`, code: "payload_too_large" }
    let account: AccountFixture

    beforeAll(async () => {
      account = await makeAccount(server)
    })

    /** A lead body of exactly `bytes` bytes, padded inside `attributes`. */
    const leadBodyOf = (bytes: number) => {
      const shell = JSON.stringify({ name: "Big", phone: nextPhone(), attributes: { pad: "" } })
      const body = shell.replace('"pad":""', `"pad":"${"x".repeat(bytes - shell.length)}"`)
      expect(Buffer.byteLength(body)).toBe(bytes)
      return body
    }

    const post = (raw: string, auth: string | undefined = account.ownerKey) =>
      call(server, "POST", "/api/v1/leads", { auth, raw, headers: { "content-type": "application/json" } })

    it("refuses a body over 1 MiB from its Content-Length, before the key, and closes the connection", async () => {
      for (const auth of [account.ownerKey, undefined]) {
        const reply = await post(leadBodyOf(LIMIT + 1), auth)
        expect(reply.status).toBe(413)
        expect(reply.body).toEqual(TOO_LARGE)
        expect(reply.headers.get("connection")).toBe("close")
      }
    })

    it("reads a body of exactly 1 MiB (and then refuses its oversized attributes)", async () => {
      const reply = await post(leadBodyOf(LIMIT))
      expect(reply.status).toBe(400)
      expect(reply.body.details).toEqual([{ path: "attributes", message: "attributes must be at most 16 KiB of JSON" }])
    })

    it("cuts a chunked body off once it passes 1 MiB, without reading the rest", async () => {
      const chunk = new Uint8Array(64 * 1024).fill(0x20)
      const cap = 64 * 1024 * 1024
      let sent = 0
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= cap) return controller.close()
          sent += chunk.length
          controller.enqueue(chunk)
        }
      })
      const response = await fetch(`${server.baseUrl}/api/v1/leads`, {
        method: "POST",
        body,
        duplex: "half",
        headers: { authorization: `Bearer ${account.ownerKey}`, "content-type": "application/json" }
      } as RequestInit)
      expect(response.status).toBe(413)
      expect(response.headers.get("x-request-id")).toMatch(/^req_/)
      expect(await response.json()).toEqual({ error: "The request body is too large", code: "payload_too_large" })
      // The server answered long before the client ran out of body to send.
      expect(sent).toBeLessThan(cap / 2)
    })

    it.each(API_ROUTES.filter((route) => route.lists !== undefined).map((route) => route.path))(
      "refuses pages over 100 on %s",
      async (path) => {
        expect((await call(server, "GET", `${path}?limit=100`, { auth: account.ownerKey })).status).toBe(200)
        const reply = await call(server, "GET", `${path}?limit=101`, { auth: account.ownerKey })
        expect(reply.status).toBe(400)
        expect(reply.body).toEqual({
          error: "Invalid request query: limit: limit must be an integer from 1 to 100",
          code: "validation_error",
          details: [{ path: "limit", message: "limit must be an integer from 1 to 100" }]
        })
      }
    )

    it("refuses an offset past a billion, which would walk the index that far", async () => {
      const reply = await call(server, "GET", "/api/v1/leads?offset=1000000001", { auth: account.ownerKey })
      expect(reply.status).toBe(400)
      expect(reply.body.details).toEqual([
        { path: "offset", message: "offset must be an integer from 0 to 1000000000" }
      ])
    })

    sliceChecks("API4")
  })
}
