import { expect } from "vitest"
import { call } from "../Http.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

export const OPT_OUTS_PATH = "/api/v1/settings/opt-outs"

export interface OptOutSettings {
  readonly opt_out_keywords: ReadonlyArray<string>
  readonly opt_in_keywords: ReadonlyArray<string>
  readonly opt_out_reply: string | null
  readonly opt_in_reply: string | null
}

export const readOptOuts = async (target: Target, key: string) => {
  const reply = await call(target, "GET", OPT_OUTS_PATH, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body as OptOutSettings
}

/** The account's opt-out keywords: one setting per account, no id, so a thing is a keyword only it has. */
export const resource: Resource.Resource = {
  name: "opt-out settings",
  routes: [
    {
      method: "GET",
      path: OPT_OUTS_PATH,
      needs: ["leads:read", "leads:write"],
      succeeds: 200,
      request: async () => ({ path: OPT_OUTS_PATH })
    },
    {
      method: "PATCH",
      path: OPT_OUTS_PATH,
      needs: "full access",
      succeeds: 200,
      request: async ({ target }, account) => {
        const before = await readOptOuts(target, account.ownerKey)
        return {
          path: OPT_OUTS_PATH,
          json: { opt_out_reply: before.opt_out_reply === null ? "You will get no more offers." : null },
          unchanged: async () => expect(await readOptOuts(target, account.ownerKey)).toEqual(before)
        }
      }
    }
  ],
  isolation: {
    noun: "opt-out setting",
    // A keyword only this account's setting holds: another account's read must not show it.
    make: async ({ target }, key) => {
      const keyword = `NOMORE${crypto.randomUUID().slice(0, 8).toUpperCase()}`
      const reply = await call(target, "PATCH", OPT_OUTS_PATH, { auth: key, json: { opt_out_keywords: [keyword] } })
      expect(reply.status, reply.text).toBe(200)
      return keyword
    },
    read: ({ target }, key) => readOptOuts(target, key),
    unknownId: () => `NOMORE${crypto.randomUUID().slice(0, 8).toUpperCase()}`
  },
  ledger: {
    tables: [
      {
        name: "opt_out_settings",
        account: "account_id",
        rows: Resource.uncounted(
          "a PATCH adds its account's row the first time only, and the answers do not tell which"
        )
      }
    ]
  }
}
