import { expect } from "vitest"
import { createChannel } from "../channels/ChannelsResource.ts"
import { call } from "../Http.ts"
import { listAll, neverIssued } from "../internal/wire.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

let phoneCounter = 0
/**
 * A phone no other lead of this process has, ending in 1000 to 9999: never one of the
 * simulator's scripted endings (0001 to 0005), so every campaign message to it is delivered.
 */
export const campaignPhone = () => {
  phoneCounter = (phoneCounter + 1) % 9000
  return `+1628${String(200 + (process.pid % 700)).padStart(3, "0")}${1000 + phoneCounter}`
}

/** A template with a placeholder, as a campaign sends it. */
export const CAMPAIGN_TEMPLATE = {
  name: "restock_alert",
  language: "en_US",
  components: [{ type: "body", parameters: [{ type: "text", text: "{{lead.name}}" }] }]
}

export const campaignBody = (fields: Record<string, unknown> = {}) => ({
  name: "November restock",
  template: CAMPAIGN_TEMPLATE,
  audience: { tags: ["vip"], statuses: [], lead_ids: [], exclude_tags: [] },
  ...fields
})

/** POST /api/v1/campaigns, expecting 201. */
export const createCampaign = async (target: Target, key: string, fields: Record<string, unknown> = {}) => {
  const reply = await call(target, "POST", "/api/v1/campaigns", { auth: key, json: campaignBody(fields) })
  expect(reply.status, reply.text).toBe(201)
  return reply.body as Record<string, any> & { id: string }
}

export const readCampaign = async (target: Target, key: string, id: string) => {
  const reply = await call(target, "GET", `/api/v1/campaigns/${id}`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body as Record<string, any>
}

/** Creates leads (POST /api/v1/leads, expecting 201 each), `fields` merged into each; their ids in order. */
export const makeLeads = async (
  target: Target,
  key: string,
  count: number,
  fields: (i: number) => Record<string, unknown> = () => ({})
): Promise<Array<string>> => {
  const ids: Array<string> = []
  for (let start = 0; start < count; start += 20) {
    const replies = await Promise.all(
      Array.from({ length: Math.min(20, count - start) }, (_, j) =>
        call(target, "POST", "/api/v1/leads", {
          auth: key,
          json: { name: `Lead ${start + j}`, phone: campaignPhone(), ...fields(start + j) }
        })
      )
    )
    for (const reply of replies) {
      expect(reply.status, reply.text).toBe(201)
      ids.push(reply.body.id)
    }
  }
  return ids
}

/**
 * A campaign of the key's account ready to queue: a channel of its own, one lead of its own
 * (tagged with a tag no other lead has) and a draft aimed at that tag.
 */
export const makeReadyCampaign = async (target: Target, key: string, fields: Record<string, unknown> = {}) => {
  const channel = await createChannel(target, key)
  const tag = `t${crypto.randomUUID().slice(0, 8)}`
  await makeLeads(target, key, 1, () => ({ tags: [tag] }))
  return createCampaign(target, key, {
    channel_id: channel.id,
    audience: { tags: [tag], statuses: [], lead_ids: [], exclude_tags: [] },
    ...fields
  })
}

/** A queued campaign that stays queued: it may start only in a year. */
export const makeQueuedCampaign = async (target: Target, key: string) => {
  const campaign = await makeReadyCampaign(target, key, {
    scheduled_at: new Date(Date.now() + 365 * 24 * 3600 * 1000).toISOString()
  })
  const reply = await call(target, "POST", `/api/v1/campaigns/${campaign.id}/queue`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body as Record<string, any> & { id: string }
}

const isolation: Resource.Isolation = {
  noun: "campaign",
  make: async ({ target }, key) => (await createCampaign(target, key)).id,
  read: ({ target }, key, id) => readCampaign(target, key, id),
  unknownId: () => neverIssued("cmp")
}

/** Drafts for the routes that change them, queued ones for cancel: each request gets a fresh one. */
const queuedIsolation: Resource.Isolation = {
  ...isolation,
  make: async ({ target }, key) => (await makeQueuedCampaign(target, key)).id
}
const readyIsolation: Resource.Isolation = {
  ...isolation,
  make: async ({ target }, key) => (await makeReadyCampaign(target, key)).id
}

const at = (id: string) => ({ path: `/api/v1/campaigns/${id}` })
const reads = ["campaigns:read", "campaigns:write", "campaigns:send"] as const

export const resource: Resource.Resource = {
  name: "campaigns",
  routes: [
    {
      method: "GET",
      path: "/api/v1/campaigns",
      needs: [...reads],
      succeeds: 200,
      lists: "campaigns",
      request: async () => ({ path: "/api/v1/campaigns" })
    },
    {
      method: "POST",
      path: "/api/v1/campaigns",
      needs: ["campaigns:write"],
      succeeds: 201,
      request: async ({ target }, account) => {
        const name = `Campaign ${crypto.randomUUID()}`
        return {
          path: "/api/v1/campaigns",
          json: campaignBody({ name }),
          unchanged: async () => {
            const campaigns = await listAll(target, account.ownerKey, "/api/v1/campaigns", "campaigns")
            expect(campaigns.map((c: { name: string }) => c.name)).not.toContain(name)
          }
        }
      }
    },
    {
      method: "GET",
      path: "/api/v1/campaigns/{id}",
      needs: [...reads],
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    },
    {
      method: "PATCH",
      path: "/api/v1/campaigns/{id}",
      needs: ["campaigns:write"],
      succeeds: 200,
      addresses: (id) => ({ ...at(id), json: { name: "Taken over" } }),
      request: Resource.aimedAt(isolation, (id) => ({ ...at(id), json: { name: "Renamed" } }))
    },
    {
      method: "DELETE",
      path: "/api/v1/campaigns/{id}",
      needs: ["campaigns:write"],
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    },
    {
      method: "POST",
      path: "/api/v1/campaigns/{id}/queue",
      needs: ["campaigns:send"],
      succeeds: 200,
      addresses: (id) => ({ path: `/api/v1/campaigns/${id}/queue` }),
      request: Resource.aimedAt(readyIsolation, (id) => ({ path: `/api/v1/campaigns/${id}/queue` }))
    },
    {
      method: "POST",
      path: "/api/v1/campaigns/{id}/cancel",
      needs: ["campaigns:send"],
      succeeds: 200,
      addresses: (id) => ({ path: `/api/v1/campaigns/${id}/cancel` }),
      request: Resource.aimedAt(queuedIsolation, (id) => ({ path: `/api/v1/campaigns/${id}/cancel` }))
    },
    {
      method: "GET",
      path: "/api/v1/campaigns/{id}/recipients",
      needs: [...reads],
      succeeds: 200,
      addresses: (id) => ({ path: `/api/v1/campaigns/${id}/recipients` }),
      request: Resource.aimedAt(isolation, (id) => ({ path: `/api/v1/campaigns/${id}/recipients` }))
    }
  ],
  isolation,
  ledger: {
    tables: [
      {
        name: "campaigns",
        account: "account_id",
        rows: Resource.perOperation({ "POST /api/v1/campaigns": 1, "DELETE /api/v1/campaigns/{id}": -1 })
      },
      {
        name: "campaign_recipients",
        account: "account_id",
        rows: Resource.computed((answer) =>
          answer.operation === "POST /api/v1/campaigns/{id}/queue" ? (answer.body.stats?.total ?? 0) : 0
        )
      }
    ],
    ids: {
      field: "id",
      create: "POST /api/v1/campaigns",
      remove: "DELETE /api/v1/campaigns/{id}",
      list: { path: "/api/v1/campaigns", field: "campaigns" },
      parameters: [
        "/api/v1/campaigns/{id} id",
        "/api/v1/campaigns/{id}/queue id",
        "/api/v1/campaigns/{id}/cancel id",
        "/api/v1/campaigns/{id}/recipients id"
      ]
    },
    emits: { "POST /api/v1/campaigns/{id}/queue": "campaign.queued" }
  }
}
