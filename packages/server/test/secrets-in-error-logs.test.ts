import { afterAll, describe, expect, it } from "vitest"
import { makeAccount, nextPhone } from "@leadline/testkit/Fixtures"
import { call } from "@leadline/testkit/Http"
import * as MockReceiver from "@leadline/testkit/MockReceiver"
import * as ServerProcess from "./support/ServerProcess.ts"
import * as Setups from "./support/Setups.ts"

/**
 * OWASP API8, for the paths that log a cause: statements the database refuses
 * (a trigger raises, the way a full disk or a broken constraint would) while a
 * new API key, a new webhook secret, the caller's key and the operator token are
 * all in play. The server must answer a bare 500, log the failure with its cause
 * (the log is useful), and still write no secret.
 */

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const FAULTS = [
  "CREATE FUNCTION leadline_fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault in %', TG_TABLE_NAME; END $$",
  // Only rows the test marks fail, so that setting up the account still works.
  "CREATE TRIGGER fault BEFORE INSERT ON api_keys FOR EACH ROW WHEN (NEW.name = 'fail-me') EXECUTE FUNCTION leadline_fault()",
  "CREATE TRIGGER fault BEFORE INSERT ON webhook_endpoints FOR EACH ROW WHEN (NEW.description = 'fail-me') EXECUTE FUNCTION leadline_fault()",
  "CREATE TRIGGER fault BEFORE INSERT ON leads FOR EACH ROW WHEN (NEW.name = 'fail-me') EXECUTE FUNCTION leadline_fault()",
  "CREATE TRIGGER fault BEFORE INSERT ON webhook_attempts FOR EACH ROW WHEN (NEW.status_code = 418) EXECUTE FUNCTION leadline_fault()"
]

for (const [name, setup] of Setups.databases(cleanups)) {
  describe(`the server log when ${name} refuses statements`, () => {
    it("logs each failure with its cause and no API key, webhook secret or operator token", async () => {
      const { dataDir, env, query } = await setup()
      const receiver = await MockReceiver.start()
      cleanups.push(() => receiver.close())
      const settings = { ...env, WEBHOOK_ALLOW_PRIVATE_URLS: "true", WEBHOOK_POLL_INTERVAL_MS: "200" }

      // A first start migrates; the faults go in while no server holds the database.
      const first = await ServerProcess.start({ dataDir, env: settings })
      cleanups.push(() => first.stop())
      expect(await first.stop()).toBe(0)
      for (const statement of FAULTS) await query(statement)
      const server = await ServerProcess.start({ dataDir, env: { ...settings, LOG_LEVEL: "debug" } })
      cleanups.push(() => server.stop())

      const account = await makeAccount(server, { keys: { reader: ["leads:read"] } })
      const owner = account.ownerKey
      const generic = { error: "Internal server error", code: "internal_error" }

      // A key is made, then its insert fails.
      const key = await call(server, "POST", `/admin/v1/accounts/${account.accountId}/keys`, {
        auth: server.adminToken,
        json: { name: "fail-me", scopes: ["leads:read"] }
      })
      expect([key.status, key.body]).toEqual([500, generic])
      // A webhook secret is made, then its insert fails.
      const endpoint = await call(server, "POST", "/api/webhooks/endpoints", {
        auth: owner,
        json: { url: receiver.endpoint("/never").url, events: ["lead.created"], description: "fail-me" }
      })
      expect([endpoint.status, endpoint.body]).toEqual([500, generic])
      // The caller's key is in the request that fails.
      const lead = await call(server, "POST", "/api/v1/leads", {
        auth: owner,
        json: { name: "fail-me", phone: nextPhone() },
        headers: { "idempotency-key": "fails-once" }
      })
      expect([lead.status, lead.body]).toEqual([500, generic])
      expect(lead.headers.get("x-request-id")).toMatch(/^req_/)

      // The worker signs with a secret, then cannot record the attempt.
      const teapot = receiver.endpoint("/teapot")
      teapot.respond(...Array.from({ length: 20 }, () => ({ status: 418 })))
      const registered = await call(server, "POST", "/api/webhooks/endpoints", {
        auth: owner,
        json: { url: teapot.url, events: ["lead.created"] }
      })
      expect(registered.status).toBe(201)
      const secret: string = registered.body.secret
      expect(
        (await call(server, "POST", "/api/v1/leads", { auth: owner, json: { name: "Hooked", phone: nextPhone() } }))
          .status
      ).toBe(201)
      await teapot.waitFor(1, 10_000)
      const deadline = Date.now() + 10_000
      while (!server.log().includes("could not record an attempt") && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100))
      }

      expect(await server.stop()).toBe(0)
      const lines = server.log().split("\n")
      const withText = (needle: string | RegExp) =>
        lines.filter((line) => (typeof needle === "string" ? line.includes(needle) : needle.test(line)))

      // The failures are in the log, with the database's reason: a log that said nothing would pass the rest.
      expect(withText("request failed").length).toBeGreaterThanOrEqual(3)
      expect(withText("could not record an attempt").length).toBeGreaterThanOrEqual(1)
      for (const table of ["api_keys", "webhook_endpoints", "leads", "webhook_attempts"]) {
        expect(withText(`injected fault in ${table}`).length, table).toBeGreaterThanOrEqual(1)
      }
      // And no secret of any kind.
      for (const value of [owner, account.keys.reader!.apiKey, server.adminToken, secret]) {
        expect(withText(value)).toEqual([])
        expect(withText(value.slice(value.indexOf("_") + 1))).toEqual([])
      }
      expect(withText(/lk_[A-Za-z0-9_-]{20,}/)).toEqual([])
      expect(withText(/lla_[A-Za-z0-9_-]{20,}/)).toEqual([])
      expect(withText("whsec_")).toEqual([])
    }, 90_000)
  })
}
