import { expect } from "vitest"
import { call } from "../Http.ts"
import type * as Resource from "../Resource.ts"

/** GET /api/me with the key, expecting 200. */
export const me = async (context: Resource.Context, key: string) => {
  const reply = await call(context.target, "GET", "/api/me", { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body
}

/** What a key says about itself: /api/me, /api/usage and /api/users read the caller's own account, and nothing else. */
export const resource: Resource.Resource = {
  name: "identity",
  routes: [
    { method: "GET", path: "/api/me", needs: "any key", succeeds: 200, request: async () => ({ path: "/api/me" }) },
    {
      method: "GET",
      path: "/api/usage",
      needs: ["analytics:read"],
      succeeds: 200,
      request: async () => ({ path: "/api/usage" })
    },
    {
      method: "GET",
      path: "/api/users",
      needs: "any key",
      succeeds: 200,
      lists: "users",
      request: async () => ({ path: "/api/users" })
    }
  ],
  // Nothing to make: the identity comes with the key. Its user id must not show in another account's reads.
  isolation: {
    noun: "user",
    make: async (context, key) => (await me(context, key)).account.user_id,
    read: (context, key) => me(context, key),
    unknownId: () => crypto.randomUUID()
  },
  // Reads only; the accounts and users they show are the operator API's rows.
  ledger: { tables: [] }
}
