import { expect } from "vitest"
import { call } from "../Http.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

export const NOTICES_PATH = "/api/v1/settings/order-notifications"

export const readNotices = async (target: Target, key: string) => {
  const reply = await call(target, "GET", NOTICES_PATH, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body as { enabled: boolean; template: { name: string; language: string } | null }
}

/** The account's order-notice setting: one per account, no id, so a thing is the template name it names. */
export const resource: Resource.Resource = {
  name: "order notices",
  routes: [
    {
      method: "GET",
      path: NOTICES_PATH,
      needs: ["orders:read", "orders:write"],
      succeeds: 200,
      request: async () => ({ path: NOTICES_PATH })
    },
    {
      method: "PATCH",
      path: NOTICES_PATH,
      needs: "full access",
      succeeds: 200,
      request: async ({ target }, account) => {
        const before = await readNotices(target, account.ownerKey)
        return {
          path: NOTICES_PATH,
          json: { enabled: !before.enabled },
          unchanged: async () => expect(await readNotices(target, account.ownerKey)).toEqual(before)
        }
      }
    }
  ],
  isolation: {
    noun: "order notice setting",
    // A template name only this account's setting holds: another account's read must not show it.
    make: async ({ target }, key) => {
      const name = `notice_${crypto.randomUUID().replaceAll("-", "_")}`
      const reply = await call(target, "PATCH", NOTICES_PATH, {
        auth: key,
        json: { template: { name, language: "en_US" } }
      })
      expect(reply.status, reply.text).toBe(200)
      return name
    },
    read: ({ target }, key) => readNotices(target, key),
    unknownId: () => `notice_${crypto.randomUUID().replaceAll("-", "_")}`
  },
  ledger: {
    tables: [
      {
        name: "order_notice_settings",
        account: "account_id",
        rows: Resource.uncounted(
          "a PATCH adds its account's row the first time only, and the answers do not tell which"
        )
      }
    ]
  }
}
