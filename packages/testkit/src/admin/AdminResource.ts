import { expect } from "vitest"
import type { AccountFixture } from "../Fixtures.ts"
import { makeKey } from "../Fixtures.ts"
import { call } from "../Http.ts"
import * as Resource from "../Resource.ts"
import { createChannel } from "../channels/ChannelsResource.ts"
import { nextWaId } from "../conversations/ConversationsResource.ts"

/** The keys of an account as the operator lists them. */
export const keysOf = async (context: Resource.Context, account: AccountFixture) => {
  const reply = await call(context.target, "GET", `/admin/v1/accounts/${account.accountId}/keys`, {
    auth: context.target.adminToken
  })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.keys as ReadonlyArray<{ id: string }>
}

/** A fresh key to aim a key route at; a refused request must leave it as it was. */
const withKey = async (
  context: Resource.Context,
  account: AccountFixture,
  json?: unknown
): Promise<Resource.RouteRequest> => {
  const key = await makeKey(context.target, account.accountId, { name: "target", scopes: ["leads:read"] })
  const before = (await keysOf(context, account)).find((listed) => listed.id === key.id)
  return {
    path: `/admin/v1/keys/${key.id}`,
    ...(json === undefined ? {} : { json }),
    unchanged: async () =>
      expect((await keysOf(context, account)).find((listed) => listed.id === key.id)).toEqual(before)
  }
}

/** The operator API (accounts, users, API keys), under /admin/v1 and behind the admin token. */
export const resource: Resource.Resource = {
  name: "operator API",
  routes: [
    {
      method: "POST",
      path: "/admin/v1/accounts",
      needs: "admin token",
      succeeds: 201,
      request: async () => ({ path: "/admin/v1/accounts", json: { name: "Mallory Ltd" } })
    },
    {
      method: "GET",
      path: "/admin/v1/accounts",
      needs: "admin token",
      succeeds: 200,
      lists: "accounts",
      request: async () => ({ path: "/admin/v1/accounts" })
    },
    {
      method: "GET",
      path: "/admin/v1/accounts/{account_id}",
      needs: "admin token",
      succeeds: 200,
      request: async (_, account) => ({ path: `/admin/v1/accounts/${account.accountId}` })
    },
    {
      method: "POST",
      path: "/admin/v1/accounts/{account_id}/users",
      needs: "admin token",
      succeeds: 201,
      request: async (_, account) => ({
        path: `/admin/v1/accounts/${account.accountId}/users`,
        json: { role: "admin" }
      })
    },
    {
      method: "POST",
      path: "/admin/v1/accounts/{account_id}/keys",
      needs: "admin token",
      succeeds: 201,
      request: async (context, account) => {
        const before = await keysOf(context, account)
        return {
          path: `/admin/v1/accounts/${account.accountId}/keys`,
          json: { name: "minted" },
          unchanged: async () => expect(await keysOf(context, account)).toEqual(before)
        }
      }
    },
    {
      method: "GET",
      path: "/admin/v1/accounts/{account_id}/keys",
      needs: "admin token",
      succeeds: 200,
      request: async (_, account) => ({ path: `/admin/v1/accounts/${account.accountId}/keys` })
    },
    {
      method: "PATCH",
      path: "/admin/v1/keys/{key_id}",
      needs: "admin token",
      succeeds: 200,
      request: (context, account) => withKey(context, account, { scopes: [] })
    },
    {
      method: "PATCH",
      path: "/admin/v1/accounts/{account_id}",
      needs: "admin token",
      succeeds: 200,
      request: async (context, account) => {
        const usage = async () =>
          (await call(context.target, "GET", "/api/usage", { auth: account.ownerKey })).body.subscription
        const before = await usage()
        return {
          path: `/admin/v1/accounts/${account.accountId}`,
          json: { plan_id: "scale" },
          unchanged: async () => expect(await usage()).toEqual(before)
        }
      }
    },
    {
      method: "POST",
      path: "/admin/v1/simulator/whatsapp/inbound",
      needs: "admin token",
      succeeds: 202,
      request: async (context, account) => {
        const channel = await createChannel(context.target, account.ownerKey)
        const conversations = async () =>
          (
            await call(context.target, "GET", `/api/v1/conversations?channel_id=${channel.id}`, {
              auth: account.ownerKey
            })
          ).body.conversations
        return {
          path: "/admin/v1/simulator/whatsapp/inbound",
          json: { phone_number_id: channel.phone_number_id, from: nextWaId(), text: "Hello from the simulator" },
          unchanged: async () => expect(await conversations()).toEqual([])
        }
      }
    },
    {
      method: "POST",
      path: "/admin/v1/simulator/whatsapp/quality",
      needs: "admin token",
      succeeds: 202,
      request: async (context, account) => {
        const businessAccountId = `${Date.now()}${Math.floor(Math.random() * 1e6)}`
        const channel = await createChannel(context.target, account.ownerKey, {
          business_account_id: businessAccountId
        })
        const health = async () => {
          const read = await call(context.target, "GET", `/api/v1/channels/${channel.id}`, { auth: account.ownerKey })
          return { quality_rating: read.body.quality_rating, messaging_limit_tier: read.body.messaging_limit_tier }
        }
        const before = await health()
        return {
          path: "/admin/v1/simulator/whatsapp/quality",
          json: {
            business_account_id: businessAccountId,
            display_phone_number: channel.display_phone_number,
            event: "FLAGGED",
            current_limit: "TIER_10K"
          },
          unchanged: async () => expect(await health()).toEqual(before)
        }
      }
    },
    {
      method: "DELETE",
      path: "/admin/v1/keys/{key_id}",
      needs: "admin token",
      succeeds: 200,
      request: (context, account) => withKey(context, account)
    }
  ],
  isolation: {
    exempt:
      "the admin token spans every account by design, and no API key reaches these routes (the OWASP suite's API2 and API5 check the 401)"
  },
  ledger: {
    tables: [
      { name: "accounts", account: "id", rows: Resource.perOperation({ "POST /admin/v1/accounts": 1 }) },
      {
        name: "users",
        account: "account_id",
        // An account comes with its owner.
        rows: Resource.perOperation({ "POST /admin/v1/accounts": 1, "POST /admin/v1/accounts/{account_id}/users": 1 })
      }
      // api_keys is the keys slice's table (keys/KeysResource.ts), with the rows these routes issue.
    ],
    ids: { field: "account_id", create: "POST /admin/v1/accounts", parameters: ["account_id"] }
  }
}
