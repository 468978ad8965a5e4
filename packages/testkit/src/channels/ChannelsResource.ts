import { expect } from "vitest"
import { call } from "../Http.ts"
import { listAll, neverIssued } from "../internal/wire.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

/** The fields of a channel on the wire, sorted: no access token among them. */
export const CHANNEL_KEYS = [
  "business_account_id",
  "created_at",
  "display_phone_number",
  "id",
  "last_error",
  "messaging_limit_tier",
  "name",
  "phone_number_id",
  "quality_rating",
  "restrictions",
  "status",
  "type",
  "updated_at"
]

let numberCounter = 0
/** A `phone_number_id` no other test of any process has connected (they are unique in the deployment). */
export const nextPhoneNumberId = (): string =>
  `${Date.now()}${String(process.pid % 1000).padStart(3, "0")}${String(++numberCounter).padStart(4, "0")}`

export const channelBody = (fields: Record<string, unknown> = {}) => ({
  type: "whatsapp",
  name: "Support line",
  phone_number_id: nextPhoneNumberId(),
  display_phone_number: "+1 650-555-1111",
  access_token: "EAAG-test-token",
  ...fields
})

/** POST /api/v1/channels; the reply, whatever it is. */
export const postChannel = (target: Target, key: string, fields: Record<string, unknown> = {}) =>
  call(target, "POST", "/api/v1/channels", { auth: key, json: channelBody(fields) })

/** Connects a channel with the key, expecting 201. */
export const createChannel = async (target: Target, key: string, fields: Record<string, unknown> = {}) => {
  const reply = await postChannel(target, key, fields)
  expect(reply.status, reply.text).toBe(201)
  return reply.body as { id: string; phone_number_id: string; [field: string]: unknown }
}

export const readChannel = async (target: Target, key: string, id: string) => {
  const reply = await call(target, "GET", `/api/v1/channels/${id}`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body
}

export const unknownChannelId = () => neverIssued("ch")

const isolation: Resource.Isolation = {
  noun: "channel",
  make: async ({ target }, key) => (await createChannel(target, key)).id,
  read: ({ target }, key, id) => readChannel(target, key, id),
  unknownId: unknownChannelId
}

const at = (id: string) => ({ path: `/api/v1/channels/${id}` })
const reads = ["conversations:read", "messages:send"] as const

export const resource: Resource.Resource = {
  name: "channels",
  routes: [
    {
      method: "GET",
      path: "/api/v1/channels",
      needs: [...reads],
      succeeds: 200,
      lists: "channels",
      request: async () => ({ path: "/api/v1/channels" })
    },
    {
      method: "POST",
      path: "/api/v1/channels",
      needs: "full access",
      succeeds: 201,
      request: async ({ target }, account) => {
        const body = channelBody()
        return {
          path: "/api/v1/channels",
          json: body,
          unchanged: async () => {
            const channels = await listAll(target, account.ownerKey, "/api/v1/channels", "channels")
            expect(channels.map((c: { phone_number_id: string }) => c.phone_number_id)).not.toContain(
              body.phone_number_id
            )
          }
        }
      }
    },
    {
      method: "GET",
      path: "/api/v1/channels/{id}",
      needs: [...reads],
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    },
    {
      method: "PATCH",
      path: "/api/v1/channels/{id}",
      needs: "full access",
      succeeds: 200,
      addresses: (id) => ({ ...at(id), json: { status: "disabled", name: "Taken over" } }),
      request: Resource.aimedAt(isolation, (id) => ({ ...at(id), json: { name: "Renamed" } }))
    }
  ],
  isolation,
  ledger: {
    tables: [
      {
        name: "channels",
        account: "account_id",
        rows: Resource.perOperation({ "POST /api/v1/channels": 1 })
      }
    ],
    ids: {
      field: "id",
      create: "POST /api/v1/channels",
      list: { path: "/api/v1/channels", field: "channels" },
      parameters: ["/api/v1/channels/{id} id"]
    }
  }
}
