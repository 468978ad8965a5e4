import { beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount } from "../Fixtures.ts"
import { call } from "../Http.ts"
import type { Kit } from "./Kit.ts"

/** The suite's API3 checks, over the shared kit. */
export const api3PropertyAuthorization = (kit: Kit) => {
  const { server, sliceChecks, makeDelivery, READS } = kit
  describe("API3 broken object property level authorization", () => {
    let account: AccountFixture
    let other: AccountFixture

    beforeAll(async () => {
      account = await makeAccount(server)
      other = await makeAccount(server)
    })

    it("never answers with another account's data, on any route that reads", async () => {
      const { endpoint, lead, delivery } = await makeDelivery(other)
      const secrets = [other.accountId, other.ownerUserId, lead.id, lead.phone, endpoint.id, delivery.id]
      for (const path of READS) {
        const reply = await call(server, "GET", path, { auth: account.ownerKey })
        expect(reply.status, path).toBe(200)
        for (const secret of secrets) expect(reply.text, `${path} shows ${secret}`).not.toContain(secret)
      }
    })

    sliceChecks("API3")
  })
}
