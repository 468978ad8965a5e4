import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import * as Client from "@leadline/http-adapter/Client"
import { beforeAll, describe, expect, it } from "vitest"
import { createChannel } from "../channels/ChannelsResource.ts"
import { makeAccount } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden, listAll, until } from "../internal/wire.ts"
import { eventsOf } from "../eventlog/EventsResource.ts"
import type { ContractContext } from "../Slice.ts"
import { CAMPAIGN_TEMPLATE, createCampaign, makeLeads, makeQueuedCampaign, readCampaign } from "./CampaignsResource.ts"

const audience = (fields: Record<string, unknown>) => ({
  tags: [],
  statuses: [],
  lead_ids: [],
  exclude_tags: [],
  ...fields
})
const uniqueTag = () => `t${crypto.randomUUID().slice(0, 8)}`
const ZERO = { total: 0, queued: 0, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 0, cancelled: 0 }

/** Campaigns (docs/contract-messaging.md §8): drafts, the audience, queueing, sending through the simulator, cancel, scopes. */
export const contract = (context: ContractContext) => {
  describe("campaigns", () => {
    const owner = () => context.acme.ownerKey
    const post = (path: string, key = owner(), json?: unknown, headers?: Record<string, string>) =>
      call(context.target, "POST", path, {
        auth: key,
        ...(json === undefined ? {} : { json }),
        ...(headers ? { headers } : {})
      })
    const get = (path: string, key = owner()) => call(context.target, "GET", path, { auth: key })
    const used = async (key: string) => (await get("/api/usage", key)).body.usage.messages_used as number
    const recipientsOf = async (key: string, id: string) =>
      listAll(context.target, key, `/api/v1/campaigns/${id}/recipients`, "recipients")
    const settled = (
      key: string,
      id: string,
      done: (c: Record<string, any>) => boolean = (c) => c.status === "completed" && c.stats.read === c.stats.sent
    ) => until(() => readCampaign(context.target, key, id), done, 20_000)

    let channel: { id: string }
    beforeAll(async () => {
      channel = await createChannel(context.target, owner())
    })

    it("keeps a draft with its audience count; changes and deletes only drafts", async () => {
      const tag = uniqueTag()
      await makeLeads(context.target, owner(), 2, () => ({ tags: [tag] }))
      // Criteria left out are empty: "not given".
      const created = await createCampaign(context.target, owner(), {
        channel_id: channel.id,
        audience: { tags: [tag] }
      })
      expect(created).toMatchObject({
        name: "November restock",
        channel_id: channel.id,
        template: CAMPAIGN_TEMPLATE,
        audience: audience({ tags: [tag] }),
        scheduled_at: null,
        status: "draft",
        audience_count: 2,
        stats: ZERO,
        error: null,
        queued_at: null,
        started_at: null,
        completed_at: null,
        cancelled_at: null
      })
      expect(created.id).toMatch(/^cmp_[0-9a-z]{26}$/)
      const renamed = await call(context.target, "PATCH", `/api/v1/campaigns/${created.id}`, {
        auth: owner(),
        json: { name: "Winter restock", scheduled_at: "2030-01-01T10:00:00+01:00" }
      })
      expect(renamed.status, renamed.text).toBe(200)
      expect(renamed.body).toMatchObject({ name: "Winter restock", scheduled_at: "2030-01-01T09:00:00.000Z" })
      expect(await readCampaign(context.target, owner(), created.id)).toEqual(renamed.body)
      const drafts = await listAll(context.target, owner(), "/api/v1/campaigns?status=draft", "campaigns")
      expect(drafts.map((c) => c.id)).toContain(created.id)
      const queued = await listAll(context.target, owner(), "/api/v1/campaigns?status=queued", "campaigns")
      expect(queued.map((c) => c.id)).not.toContain(created.id)
      const deleted = await call(context.target, "DELETE", `/api/v1/campaigns/${created.id}`, { auth: owner() })
      expect(deleted.body).toEqual({ id: created.id, deleted: true })
      expect((await get(`/api/v1/campaigns/${created.id}`)).status).toBe(404)

      const sent = await makeQueuedCampaign(context.target, owner())
      const notDraft = { error: "Campaign is not a draft", code: "conflict" }
      const patch = await call(context.target, "PATCH", `/api/v1/campaigns/${sent.id}`, {
        auth: owner(),
        json: { name: "Too late" }
      })
      expect([patch.status, patch.body]).toEqual([409, notDraft])
      const remove = await call(context.target, "DELETE", `/api/v1/campaigns/${sent.id}`, { auth: owner() })
      expect([remove.status, remove.body]).toEqual([409, notDraft])
    })

    it("refuses bad drafts, naming the field, and stores none of them", async () => {
      const account = await makeAccount(context.target)
      const [lead] = await makeLeads(context.target, account.ownerKey, 1)
      const refused = async (body: Record<string, unknown>) => {
        const reply = await post("/api/v1/campaigns", account.ownerKey, {
          name: "Bad",
          template: CAMPAIGN_TEMPLATE,
          audience: audience({ tags: ["vip"] }),
          ...body
        })
        expect(reply.status, reply.text).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        return reply.body.details.map((d: { path: string }) => d.path)
      }
      expect(
        await refused({
          template: {
            ...CAMPAIGN_TEMPLATE,
            components: [{ type: "body", parameters: [{ type: "text", text: "{{lead.nmae}}" }] }]
          }
        })
      ).toEqual(["template"])
      expect(await refused({ audience: audience({ exclude_tags: ["opted-out"] }) })).toEqual(["audience"])
      expect(
        await refused({ audience: audience({ lead_ids: Array.from({ length: 1001 }, (_, i) => `ld_${i}`) }) })
      ).toEqual(["audience.lead_ids"])
      expect(await refused({ scheduled_at: "next tuesday" })).toEqual(["scheduled_at"])
      expect(await refused({ audience: audience({ lead_ids: [lead, "ld_00000000000000000000000000"] }) })).toEqual([
        "audience.lead_ids.1"
      ])
      expect(await refused({ channel_id: "ch_00000000000000000000000000" })).toEqual(["channel_id"])
      expect((await get("/api/v1/campaigns", account.ownerKey)).body.meta.total).toBe(0)
    })

    it("sends to any of the tags in the statuses, plus lead ids, minus excluded tags; each in its own new conversation", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      await createChannel(context.target, key)
      const [a, b, c, d, e, f] = await makeLeads(
        context.target,
        key,
        6,
        (i) =>
          [
            { name: "Ada", tags: ["x"], status: "new" },
            { name: "Bo", tags: ["y"], status: "contacted" },
            { name: "Cy", tags: ["x"], status: "won" },
            { name: "Di", tags: ["z"] },
            { name: "Ed", tags: ["x", "optout"] },
            { name: "Fa", tags: [], status: "new" }
          ][i]!
      )
      const campaign = await createCampaign(context.target, key, {
        audience: { tags: ["x", "y"], statuses: ["new", "contacted"], lead_ids: [d, e], exclude_tags: ["optout"] }
      })
      expect(campaign.audience_count).toBe(3)
      const queued = await post(`/api/v1/campaigns/${campaign.id}/queue`, key)
      expect(queued.status, queued.text).toBe(200)
      expect(queued.body).toMatchObject({
        status: "queued",
        audience_count: null,
        stats: { ...ZERO, total: 3, queued: 3 }
      })
      expect(queued.body.queued_at).not.toBeNull()
      const recipients = await recipientsOf(key, campaign.id)
      expect(recipients.map((r) => r.lead_id)).toEqual([a, b, d].sort())
      for (const lead of [c, e, f]) expect(recipients.map((r) => r.lead_id)).not.toContain(lead)
      const done = await settled(key, campaign.id)
      expect(done).toMatchObject({
        status: "completed",
        stats: { total: 3, queued: 0, sent: 3, delivered: 3, read: 3, failed: 0, skipped: 0, cancelled: 0 }
      })
      expect(done.started_at).not.toBeNull()
      expect(done.completed_at).not.toBeNull()
      // Its end is an event, with the stats as they were then (docs/contract-messaging.md §8.5).
      const completed = await eventsOf(context.target, key, "?type=campaign.*")
      expect(completed.events.map((event) => event.type)).toEqual(["campaign.completed", "campaign.queued"])
      expect(completed.events[0]!.data).toMatchObject({
        id: campaign.id,
        status: "completed",
        completed_at: done.completed_at,
        stats: { total: 3, queued: 0, skipped: 0, cancelled: 0 }
      })
      const names = new Map([
        [a, "Ada"],
        [b, "Bo"],
        [d, "Di"]
      ])
      for (const recipient of await recipientsOf(key, campaign.id)) {
        expect(recipient.status).toBe("read")
        const message = (await get(`/api/v1/messages/${recipient.message_id}`, key)).body
        expect(message).toMatchObject({
          lead_id: recipient.lead_id,
          type: "template",
          sender_type: "campaign",
          campaign_id: campaign.id,
          template: {
            name: "restock_alert",
            language: "en_US",
            components: [{ type: "body", parameters: [{ type: "text", text: names.get(recipient.lead_id) }] }]
          }
        })
        // The lead had no conversation: the campaign made one, pending until the lead answers.
        const conversation = (await get(`/api/v1/conversations/${message.conversation_id}`, key)).body
        expect(conversation).toMatchObject({ lead_id: recipient.lead_id, status: "pending" })
      }
      expect(await used(key)).toBe(3)
    })

    it("skips a recipient whose placeholder renders empty, and counts only those sent", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      await createChannel(context.target, key)
      const tag = uniqueTag()
      const [withEmail, without] = await makeLeads(context.target, key, 2, (i) =>
        i === 0
          ? { name: "Ada", tags: [tag], email: "ada@example.com", attributes: { city: "Lisbon" } }
          : { name: "Bo", tags: [tag], attributes: { city: "Porto" } }
      )
      const campaign = await createCampaign(context.target, key, {
        template: {
          name: "order_ready",
          language: "en",
          components: [
            {
              type: "body",
              parameters: [
                { type: "text", text: "{{ lead.email }}" },
                { type: "text", text: "Pick up in {{lead.attributes.city}}" }
              ]
            }
          ]
        },
        audience: audience({ tags: [tag] })
      })
      const queued = await post(`/api/v1/campaigns/${campaign.id}/queue`, key)
      expect(queued.body.stats).toEqual({ ...ZERO, total: 2, queued: 1, skipped: 1 })
      const recipients = await recipientsOf(key, campaign.id)
      const skipped = recipients.find((r) => r.lead_id === without)!
      expect(skipped).toMatchObject({
        status: "skipped",
        message_id: null,
        error: { code: "missing_template_value", provider_code: null }
      })
      const sent = recipients.find((r) => r.lead_id === withEmail)!
      const message = (await get(`/api/v1/messages/${sent.message_id}`, key)).body
      expect(message.template.components[0].parameters).toEqual([
        { type: "text", text: "ada@example.com" },
        { type: "text", text: "Pick up in Lisbon" }
      ])
      expect((await settled(key, campaign.id)).stats).toMatchObject({ total: 2, sent: 1, skipped: 1 })
      expect(await used(key)).toBe(1)
      const onlySkipped = await get(`/api/v1/campaigns/${campaign.id}/recipients?status=skipped`, key)
      expect(onlySkipped.body.recipients.map((r: { lead_id: string }) => r.lead_id)).toEqual([without])
      expect(onlySkipped.body.meta.total).toBe(1)
    })

    it("answers 409 for an empty audience; queues once, however often or at once it is asked", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      await createChannel(context.target, key)
      const empty = await createCampaign(context.target, key, { audience: audience({ tags: [uniqueTag()] }) })
      const refused = await post(`/api/v1/campaigns/${empty.id}/queue`, key)
      expect([refused.status, refused.body]).toEqual([
        409,
        { error: "The campaign's audience is empty: no lead matches it", code: "conflict" }
      ])
      expect((await readCampaign(context.target, key, empty.id)).status).toBe("draft")

      const tag = uniqueTag()
      await makeLeads(context.target, key, 3, () => ({ tags: [tag] }))
      const once = await createCampaign(context.target, key, { audience: audience({ tags: [tag] }) })
      const first = await post(`/api/v1/campaigns/${once.id}/queue`, key, undefined, { "idempotency-key": "queue-1" })
      expect(first.status, first.text).toBe(200)
      const replay = await post(`/api/v1/campaigns/${once.id}/queue`, key, undefined, { "idempotency-key": "queue-1" })
      expect(replay.status).toBe(200)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.body).toEqual(first.body)
      const again = await post(`/api/v1/campaigns/${once.id}/queue`, key)
      expect([again.status, again.body]).toEqual([409, { error: "Campaign is not a draft", code: "conflict" }])

      const raced = await createCampaign(context.target, key, { audience: audience({ tags: [tag] }) })
      const replies = await Promise.all(
        Array.from({ length: 4 }, () => post(`/api/v1/campaigns/${raced.id}/queue`, key))
      )
      expect(replies.map((r) => r.status).sort()).toEqual([200, 409, 409, 409])
      expect((await recipientsOf(key, raced.id)).length).toBe(3)
      // Two campaigns of three recipients each, whatever was asked twice.
      expect(await used(key)).toBe(6)
    })

    it("reserves the whole audience or none of it: 402 queues nothing", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      await createChannel(context.target, key)
      const leads = await makeLeads(context.target, key, 101, () => ({ tags: ["bulk"] }))
      for (let i = 0; i < 9; i++) {
        const campaign = await createCampaign(context.target, key, { audience: audience({ tags: ["bulk"] }) })
        expect((await post(`/api/v1/campaigns/${campaign.id}/queue`, key)).status).toBe(200)
      }
      expect(await used(key)).toBe(909)
      const tooBig = await createCampaign(context.target, key, { audience: audience({ tags: ["bulk"] }) })
      const refused = await post(`/api/v1/campaigns/${tooBig.id}/queue`, key)
      expect([refused.status, refused.body]).toEqual([
        402,
        { error: "Monthly message limit reached: 909 of 1000 on plan free", code: "message_limit_reached" }
      ])
      expect(await readCampaign(context.target, key, tooBig.id)).toMatchObject({ status: "draft", stats: ZERO })
      expect(await recipientsOf(key, tooBig.id)).toEqual([])
      expect(await used(key)).toBe(909)
      const fits = await createCampaign(context.target, key, { audience: audience({ lead_ids: leads.slice(0, 91) }) })
      expect((await post(`/api/v1/campaigns/${fits.id}/queue`, key)).status).toBe(200)
      expect(await used(key)).toBe(1000)
    }, 120_000)

    it("cancels a scheduled campaign: every message cancelled and its usage given back", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const queued = await makeQueuedCampaign(context.target, key)
      expect(queued).toMatchObject({ status: "queued", stats: { total: 1, queued: 1 } })
      expect(await used(key)).toBe(1)
      const [recipient] = await recipientsOf(key, queued.id)
      const message = (await get(`/api/v1/messages/${recipient.message_id}`, key)).body
      expect(message).toMatchObject({ status: "queued", scheduled_at: queued.scheduled_at })
      const cancelled = await post(`/api/v1/campaigns/${queued.id}/cancel`, key)
      expect(cancelled.status, cancelled.text).toBe(200)
      expect(cancelled.body).toMatchObject({ status: "cancelled", stats: { ...ZERO, total: 1, cancelled: 1 } })
      expect(cancelled.body.cancelled_at).not.toBeNull()
      expect((await get(`/api/v1/messages/${recipient.message_id}`, key)).body.status).toBe("cancelled")
      expect(await used(key)).toBe(0)
      const twice = await post(`/api/v1/campaigns/${queued.id}/cancel`, key)
      expect([twice.status, twice.body]).toEqual([409, { error: "Campaign is already cancelled", code: "conflict" }])
      const draft = await createCampaign(context.target, key)
      const early = await post(`/api/v1/campaigns/${draft.id}/cancel`, key)
      expect([early.status, early.body]).toEqual([
        409,
        { error: "Campaign is a draft: delete it instead", code: "conflict" }
      ])
    })

    it("shows a lead deleted after queueing as skipped, and completes without it", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const queued = await makeQueuedCampaign(context.target, key)
      const [recipient] = await recipientsOf(key, queued.id)
      expect((await call(context.target, "DELETE", `/api/v1/leads/${recipient.lead_id}`, { auth: key })).status).toBe(
        200
      )
      const after = await readCampaign(context.target, key, queued.id)
      expect(after).toMatchObject({ status: "completed", stats: { ...ZERO, total: 1, skipped: 1 } })
      expect(await recipientsOf(key, queued.id)).toEqual([
        expect.objectContaining({
          lead_id: recipient.lead_id,
          status: "skipped",
          error: expect.objectContaining({ code: "lead_deleted" })
        })
      ])
      expect(await used(key)).toBe(0)
    })

    it("fails the campaign on a template WhatsApp refuses, cancelling the rest instead of sending each", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      await createChannel(context.target, key)
      const tag = uniqueTag()
      await makeLeads(context.target, key, 120, () => ({ tags: [tag] }))
      // The simulator refuses templates named missing_… as WhatsApp does one that does not exist (132001).
      const campaign = await createCampaign(context.target, key, {
        template: { name: "missing_restock", language: "en_US" },
        audience: audience({ tags: [tag] })
      })
      expect((await post(`/api/v1/campaigns/${campaign.id}/queue`, key)).status).toBe(200)
      const failed = await until(
        () => readCampaign(context.target, key, campaign.id),
        (c) => c.status === "failed" && c.stats.queued === 0,
        20_000
      )
      expect(failed.error).toMatchObject({ code: "template_rejected", provider_code: 132001 })
      const { stats } = failed
      expect(stats.total).toBe(120)
      expect(stats.failed + stats.cancelled).toBe(120)
      // Only the sends under way when the first refusal came back went out: one wave of the sender.
      expect(stats.failed).toBeLessThanOrEqual(100)
      expect(stats.cancelled).toBeGreaterThan(0)
      expect(await used(key)).toBe(0)
    }, 60_000)

    it("lets campaigns:read view, campaigns:write write but not queue, campaigns:send queue but not write", async () => {
      const account = await makeAccount(context.target, {
        keys: { read: ["campaigns:read"], write: ["campaigns:write"], send: ["campaigns:send"] }
      })
      await createChannel(context.target, account.ownerKey)
      const tag = uniqueTag()
      await makeLeads(context.target, account.ownerKey, 1, () => ({ tags: [tag] }))
      const body = { name: "Scoped", template: CAMPAIGN_TEMPLATE, audience: audience({ tags: [tag] }) }
      const byRead = await post("/api/v1/campaigns", account.keys.read!.apiKey, body)
      expect([byRead.status, byRead.body]).toEqual([403, forbidden("campaigns:write")])
      const bySend = await post("/api/v1/campaigns", account.keys.send!.apiKey, body)
      expect([bySend.status, bySend.body]).toEqual([403, forbidden("campaigns:write")])
      const created = await post("/api/v1/campaigns", account.keys.write!.apiKey, body)
      expect(created.status, created.text).toBe(201)
      expect((await get(`/api/v1/campaigns/${created.body.id}`, account.keys.read!.apiKey)).status).toBe(200)
      const byWrite = await post(`/api/v1/campaigns/${created.body.id}/queue`, account.keys.write!.apiKey)
      expect([byWrite.status, byWrite.body]).toEqual([403, forbidden("campaigns:send")])
      expect((await readCampaign(context.target, account.ownerKey, created.body.id)).status).toBe("draft")
      const queued = await post(`/api/v1/campaigns/${created.body.id}/queue`, account.keys.send!.apiKey)
      expect(queued.status, queued.text).toBe(200)
      const byLeads = await get("/api/v1/campaigns", context.acme.keys.leadsRead!.apiKey)
      expect([byLeads.status, byLeads.body]).toEqual([403, forbidden("campaigns:read")])
    })

    it("creates, queues and reads a campaign through the generated client; a second queue is a typed failure", async () => {
      const account = await makeAccount(context.target)
      await createChannel(context.target, account.ownerKey)
      const tag = uniqueTag()
      await makeLeads(context.target, account.ownerKey, 2, () => ({ tags: [tag] }))
      const result = await Effect.runPromise(
        Client.make({ baseUrl: context.target.baseUrl, apiKey: account.ownerKey }).pipe(
          Effect.flatMap((client) =>
            Effect.gen(function* () {
              const draft = yield* client.campaigns.create({
                payload: {
                  name: "Typed",
                  template: { name: "restock_alert", language: "en_US" },
                  audience: { tags: [tag], statuses: [], lead_ids: [], exclude_tags: [] }
                },
                headers: {}
              })
              const queued = yield* client.campaigns.queue({ params: { id: draft.id }, headers: {} })
              const again = yield* Effect.flip(client.campaigns.queue({ params: { id: draft.id }, headers: {} }))
              const recipients = yield* client.campaigns.recipients({ params: { id: draft.id }, query: {} })
              return { draft, queued, again, recipients }
            })
          ),
          Effect.provide(FetchHttpClient.layer)
        )
      )
      expect(result.draft).toMatchObject({ status: "draft", audience_count: 2 })
      expect(result.queued).toMatchObject({ id: result.draft.id, status: "queued", stats: { total: 2 } })
      expect(result.again._tag).toBe("Conflict")
      expect(result.recipients.meta.total).toBe(2)
    })

    it("is another account's 404", async () => {
      const campaign = await createCampaign(context.target, owner())
      const reply = await post(`/api/v1/campaigns/${campaign.id}/queue`, context.other.ownerKey)
      expect([reply.status, reply.body]).toEqual([
        404,
        { error: `No campaign with id ${campaign.id}`, code: "not_found" }
      ])
    })
  })
}
