import { beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount, nextPhone } from "../Fixtures.ts"
import { call } from "../Http.ts"
import type { Kit } from "./Kit.ts"

/** The suite's API8 checks, over the shared kit. */
export const api8Misconfiguration = (kit: Kit) => {
  const { server, createLead, unknownLeadId, rawCall } = kit
  describe("API8 security misconfiguration", () => {
    const LEAK = /at \w+ \(|\.ts:|\.js:|SELECT |INSERT |_tag|Effect/
    const REQUEST_ID = /^req_[0-9a-z]{26}$/
    let account: AccountFixture
    let reader: string
    let takenPhone: string
    const usedIdempotencyKey = `used-${crypto.randomUUID()}`

    beforeAll(async () => {
      account = await makeAccount(server, { keys: { reader: ["leads:read"] } })
      reader = account.keys.reader!.apiKey
      takenPhone = (await createLead(account)).phone
      const first = await call(server, "POST", "/api/v1/leads", {
        auth: account.ownerKey,
        json: { name: "First", phone: nextPhone() },
        headers: { "idempotency-key": usedIdempotencyKey }
      })
      expect(first.status).toBe(201)
    })

    interface Bad {
      readonly method: string
      readonly path: string
      /** Who calls: the owner (default), the read-only key, the admin token or nobody. */
      readonly as?: "owner" | "reader" | "admin" | "nobody"
      readonly body?: string | Uint8Array
      readonly headers?: Record<string, string>
      readonly status: number
    }

    const json = { "content-type": "application/json" }
    const BAD_REQUESTS: ReadonlyArray<readonly [string, () => Bad]> = [
      [
        "malformed JSON",
        () => ({ method: "POST", path: "/api/v1/leads", body: '{"name": ', headers: json, status: 400 })
      ],
      [
        "JSON with trailing junk",
        () => ({ method: "POST", path: "/api/v1/leads", body: "{} {}", headers: json, status: 400 })
      ],
      ["a JSON array", () => ({ method: "POST", path: "/api/v1/leads", body: "[1, 2]", headers: json, status: 400 })],
      ["JSON null", () => ({ method: "POST", path: "/api/v1/leads", body: "null", headers: json, status: 400 })],
      [
        "invalid UTF-8",
        () => ({
          method: "POST",
          path: "/api/v1/leads",
          body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
          headers: json,
          status: 400
        })
      ],
      [
        "wrong types everywhere",
        () => ({
          method: "POST",
          path: "/api/v1/leads",
          body: JSON.stringify({ name: 5, phone: true, email: 7, tags: "a", status: "vip", attributes: [1] }),
          headers: json,
          status: 400
        })
      ],
      [
        "a number too large for a double",
        () => ({
          method: "POST",
          path: "/api/v1/leads",
          body: '{"name":1e999,"phone":"+1"}',
          headers: json,
          status: 400
        })
      ],
      [
        "a __proto__ key",
        () => ({
          method: "POST",
          path: "/api/v1/leads",
          body: `{"name":"x","phone":"${nextPhone()}","__proto__":{"admin":true}}`,
          headers: json,
          status: 400
        })
      ],
      ["a huge limit", () => ({ method: "GET", path: "/api/v1/leads?limit=99999999999999999999", status: 400 })],
      ["an exponent offset", () => ({ method: "GET", path: "/api/v1/leads?offset=1e400", status: 400 })],
      ["a fractional limit", () => ({ method: "GET", path: "/api/v1/leads?limit=1.5", status: 400 })],
      ["a bad endpoint UUID", () => ({ method: "DELETE", path: "/api/webhooks/endpoints?id=not-a-uuid", status: 400 })],
      [
        "SQL in a UUID filter",
        () => ({ method: "GET", path: "/api/webhooks/deliveries?endpoint_id=1'%20OR%20'1'='1", status: 400 })
      ],
      [
        "an unknown delivery status",
        () => ({ method: "GET", path: "/api/webhooks/deliveries?status=all", status: 400 })
      ],
      ["SQL in a lead id", () => ({ method: "GET", path: "/api/v1/leads/ld_'%20OR%201=1--", status: 404 })],
      [
        "SQL in a delivery id",
        () => ({ method: "POST", path: "/api/webhooks/deliveries/redeliver?id='%3B--", status: 404 })
      ],
      ["a path traversal", () => ({ method: "GET", path: "/api/v1/leads/..%2F..%2Fetc%2Fpasswd", status: 404 })],
      ["a 5000-character id", () => ({ method: "GET", path: `/api/v1/leads/${"x".repeat(5000)}`, status: 404 })],
      ["an unknown API route", () => ({ method: "GET", path: "/api/v1/contacts", status: 404 })],
      ["a deeper unknown route", () => ({ method: "GET", path: "/api/v1/leads/ld_x/notes", status: 404 })],
      ["an unknown admin route", () => ({ method: "GET", path: "/admin/v1/nowhere", as: "admin", status: 404 })],
      ["the root", () => ({ method: "GET", path: "/", as: "nobody", status: 404 })],
      ["a dotfile", () => ({ method: "GET", path: "/.env", as: "nobody", status: 404 })],
      ["PUT on a known path", () => ({ method: "PUT", path: "/api/v1/leads", status: 404 })],
      ["OPTIONS on an API route", () => ({ method: "OPTIONS", path: "/api/v1/leads", status: 404 })],
      [
        "a CORS preflight",
        () => ({
          method: "OPTIONS",
          path: "/api/v1/leads",
          as: "nobody",
          headers: { origin: "https://evil.example", "access-control-request-method": "DELETE" },
          status: 404
        })
      ],
      ["TRACE on an API route", () => ({ method: "TRACE", path: "/api/v1/leads", status: 404 })],
      ["TRACE on /api/me", () => ({ method: "TRACE", path: "/api/me", status: 404 })],
      ["HEAD on an API route", () => ({ method: "HEAD", path: "/api/v1/leads", status: 200 })],
      ["HEAD without a key", () => ({ method: "HEAD", path: "/api/v1/leads", as: "nobody", status: 401 })],
      ["no key", () => ({ method: "GET", path: "/api/v1/leads", as: "nobody", status: 401 })],
      [
        "an API key on an admin route",
        () => ({ method: "GET", path: `/admin/v1/accounts/${account.accountId}/keys`, status: 401 })
      ],
      [
        "a missing scope",
        () => ({ method: "DELETE", path: `/api/v1/leads/${unknownLeadId()}`, as: "reader", status: 403 })
      ],
      ["an unknown lead", () => ({ method: "GET", path: `/api/v1/leads/${unknownLeadId()}`, status: 404 })],
      [
        "a duplicate phone",
        () => ({
          method: "POST",
          path: "/api/v1/leads",
          body: JSON.stringify({ name: "Twin", phone: takenPhone }),
          headers: json,
          status: 409
        })
      ],
      [
        "text/plain",
        () => ({
          method: "POST",
          path: "/api/v1/leads",
          body: "{}",
          headers: { "content-type": "text/plain" },
          status: 415
        })
      ],
      [
        "no content type",
        () => ({ method: "POST", path: "/api/v1/leads", body: JSON.stringify({ name: "x" }), status: 415 })
      ],
      [
        "an oversized body",
        () => ({
          method: "POST",
          path: "/api/v1/leads",
          body: "x".repeat(1024 * 1024 + 1),
          headers: json,
          status: 413
        })
      ],
      [
        "an Idempotency-Key over 200 characters",
        () => ({
          method: "POST",
          path: "/api/v1/leads",
          body: JSON.stringify({ name: "x", phone: nextPhone() }),
          headers: { ...json, "idempotency-key": "k".repeat(201) },
          status: 400
        })
      ],
      [
        "a reused Idempotency-Key",
        () => ({
          method: "POST",
          path: "/api/v1/leads",
          body: JSON.stringify({ name: "Other", phone: nextPhone() }),
          headers: { ...json, "idempotency-key": usedIdempotencyKey },
          status: 422
        })
      ]
    ]

    const credentialOf = (as: Bad["as"]) =>
      as === "nobody" ? undefined : as === "admin" ? server.adminToken : as === "reader" ? reader : account.ownerKey

    it.each(BAD_REQUESTS)("answers %s with a bare error body and a request id", async (_, make) => {
      const bad = make()
      const credential = credentialOf(bad.as)
      const reply = await rawCall(bad.method, bad.path, {
        headers: { ...bad.headers, ...(credential === undefined ? {} : { authorization: `Bearer ${credential}` }) },
        ...(bad.body === undefined ? {} : { body: bad.body })
      })
      expect(reply.status, reply.text).toBe(bad.status)
      expect(reply.headers.get("x-request-id")).toMatch(REQUEST_ID)
      // Nothing says what runs the server, and no origin is let in by CORS.
      expect(reply.headers.get("x-powered-by")).toBeNull()
      expect(reply.headers.get("server")).toBeNull()
      expect(reply.headers.get("access-control-allow-origin")).toBeNull()
      expect(reply.text).not.toMatch(LEAK)
      if (bad.method === "HEAD") {
        expect(reply.text).toBe("")
        return
      }
      if (bad.status >= 400) {
        expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
        expect(typeof reply.body.error).toBe("string")
        expect(typeof reply.body.code).toBe("string")
        const extra = Object.keys(reply.body).filter((key) => !["error", "code", "details"].includes(key))
        expect(extra).toEqual([])
        if ("details" in reply.body) {
          for (const detail of reply.body.details) expect(Object.keys(detail).sort()).toEqual(["message", "path"])
        }
      }
    })

    it("makes its own request ids and never echoes a client's", async () => {
      const reply = await call(server, "GET", "/api/me", {
        auth: account.ownerKey,
        headers: { "x-request-id": "req_forged" }
      })
      expect(reply.headers.get("x-request-id")).toMatch(REQUEST_ID)
      expect(reply.headers.get("x-request-id")).not.toContain("forged")
    })
  })
}
