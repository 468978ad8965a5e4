import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CampaignQueueBatch } from "@leadline/core/campaigns/Campaigns"
import { CampaignsRepo } from "@leadline/core/campaigns/CampaignsRepo"
import * as Services from "@leadline/core/Services"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import * as MemoryStores from "@leadline/memory-adapter/MemoryStores"
import * as Database from "@leadline/sql-adapter/Database"
import * as SqlStores from "@leadline/sql-adapter/SqlStores"
import { createCampaign, makeLeads, readCampaign } from "../src/campaigns/CampaignsResource.ts"
import { createChannel } from "../src/channels/ChannelsResource.ts"
import { postWebhook } from "../src/conversations/ConversationsResource.ts"
import { type AccountFixture, makeAccount } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import { listAll, sleep, until } from "../src/internal/wire.ts"
import * as MockReceiver from "../src/MockReceiver.ts"
import * as TestDatabase from "../src/TestDatabase.ts"
import * as TestServer from "../src/TestServer.ts"

/**
 * Campaigns where the wiring matters: a queue that fails half-way, statuses that race, a cancel
 * while the sender is at work, a scheduled start. On the in-memory stores and on SQL.
 */

/** A campaign of this name fails once its recipients, threads, messages and usage are written. */
const EXPLODES = "Explodes halfway"

/** Every `queueWritten` call, in order: a queue tells the store once, with its whole count. */
const written: Array<number> = []

/** Queues write 2 recipients per statement here, so a few leads take every queue through several batches. */
const BATCH = 2

const instrumented = Layer.effect(
  CampaignsRepo,
  Effect.map(CampaignsRepo, (repo) =>
    CampaignsRepo.of({
      ...repo,
      queueWritten: (queued) =>
        Effect.andThen(
          Effect.sync(() => written.push(queued)),
          repo.queueWritten(queued)
        ),
      // After the real write: its threads, messages and recipients are in, and must all go again.
      queueRecipients: (accountId, campaignId, recipients) =>
        Effect.andThen(repo.queueRecipients(accountId, campaignId, recipients), () =>
          Effect.flatMap(repo.find(accountId, campaignId), (campaign) =>
            campaign?.name === EXPLODES
              ? Effect.die(new Error("the store failed half-way through the queue"))
              : Effect.void
          )
        )
    })
  )
)

const wirings: ReadonlyArray<
  readonly [string, () => Promise<{ app: Layer.Layer<any, unknown>; dispose: () => Promise<void> }>]
> = [
  [
    "in memory",
    async () => ({
      app: Services.layer.pipe(
        Layer.provide(Layer.succeed(CampaignQueueBatch, BATCH)),
        Layer.provideMerge(instrumented),
        Layer.provideMerge(MemoryStores.layer)
      ),
      dispose: async () => {}
    })
  ],
  [
    "on SQL",
    async () => {
      const database = await TestDatabase.make()
      return {
        app: Services.layer.pipe(
          Layer.provide(Layer.succeed(CampaignQueueBatch, BATCH)),
          Layer.provideMerge(instrumented),
          Layer.provideMerge(SqlStores.layer),
          Layer.provideMerge(Database.layer(database.config))
        ),
        dispose: () => database.dispose()
      }
    }
  ]
]

const audience = (tags: ReadonlyArray<string>) => ({ tags, statuses: [], lead_ids: [], exclude_tags: [] })
const uniqueTag = () => `t${crypto.randomUUID().slice(0, 8)}`

for (const [name, wiring] of wirings) {
  describe(`campaigns with the sender off, ${name}`, () => {
    let server: TestServer.Running
    let receiver: MockReceiver.MockReceiver
    let account: AccountFixture
    let dispose: () => Promise<void>

    beforeAll(async () => {
      const made = await wiring()
      dispose = made.dispose
      server = await TestServer.start({
        app: made.app,
        messaging: { sender: false },
        webhooks: { allowPrivateUrls: true, workerOptions: { pollInterval: "200 millis" } }
      })
      receiver = await MockReceiver.start()
      account = await makeAccount(server)
    })
    afterAll(async () => {
      await receiver?.close()
      await server?.close()
      await dispose?.()
    })

    const key = () => account.ownerKey
    const used = async () =>
      (await call(server, "GET", "/api/usage", { auth: key() })).body.usage.messages_used as number
    const queue = (id: string) => call(server, "POST", `/api/v1/campaigns/${id}/queue`, { auth: key() })

    it("queues all or nothing: a failure half-way leaves no message, conversation, reservation or event", async () => {
      const endpoint = receiver.endpoint("/queued")
      const registered = await call(server, "POST", "/api/webhooks/endpoints", {
        auth: key(),
        json: { url: endpoint.url, events: ["campaign.queued"] }
      })
      endpoint.setSecret(registered.body.secret)
      await createChannel(server, key())
      const tag = uniqueTag()
      const leads = await makeLeads(server, key(), 3, () => ({ tags: [tag] }))
      const doomed = await createCampaign(server, key(), { name: EXPLODES, audience: audience([tag]) })
      const failed = await queue(doomed.id)
      expect(failed.status).toBe(500)
      expect(failed.body.code).toBe("internal_error")
      expect(await readCampaign(server, key(), doomed.id)).toMatchObject({ status: "draft", queued_at: null })
      expect(await used()).toBe(0)
      for (const lead of leads) {
        const threads = await call(server, "GET", `/api/v1/conversations?lead_id=${lead}`, { auth: key() })
        expect(threads.body.conversations, lead).toEqual([])
      }
      const good = await createCampaign(server, key(), { audience: audience([tag]) })
      expect((await queue(good.id)).status).toBe(200)
      const [delivery] = await endpoint.waitFor(1, 10_000)
      await sleep(500)
      expect(endpoint.requests()).toHaveLength(1)
      expect(delivery!.verified).toEqual({ service: true, standard: true })
      const event = JSON.parse(delivery!.body)
      expect(event).toMatchObject({
        type: "campaign.queued",
        data: { id: good.id, status: "queued", stats: { total: 3, queued: 3 } }
      })
      expect(await used()).toBe(3)
    })

    it("queues an audience larger than a batch: one message per recipient over several statements, statistics refreshed once", async () => {
      const channel = await createChannel(server, key())
      const tag = uniqueTag()
      const leads = await makeLeads(server, key(), 2 * BATCH + 1, () => ({ tags: [tag] }))
      const campaign = await createCampaign(server, key(), { channel_id: channel.id, audience: audience([tag]) })
      const before = written.length
      const queued = await queue(campaign.id)
      expect(queued.status).toBe(200)
      expect(queued.body.stats).toMatchObject({ total: leads.length, queued: leads.length, skipped: 0 })
      // Once, after the last batch: each refresh reads the tables it grows (20 of them took 8 s at 100,000).
      expect(written.slice(before)).toEqual([leads.length])
      const recipients = await listAll(server, key(), `/api/v1/campaigns/${campaign.id}/recipients`, "recipients")
      expect(recipients.map((r) => r.lead_id).sort()).toEqual([...leads].sort())
      expect(new Set(recipients.map((r) => r.message_id)).size).toBe(leads.length)
      for (const lead of leads) {
        const threads = await call(server, "GET", `/api/v1/conversations?lead_id=${lead}`, { auth: key() })
        expect(threads.body.conversations, lead).toHaveLength(1)
      }
    })

    it("keeps the stats equal to the recipients' messages when statuses race, repeat and arrive out of order", async () => {
      const channel = await createChannel(server, key())
      const tag = uniqueTag()
      await makeLeads(server, key(), 6, () => ({ tags: [tag] }))
      const campaign = await createCampaign(server, key(), { channel_id: channel.id, audience: audience([tag]) })
      const usedBefore = await used()
      expect((await queue(campaign.id)).status).toBe(200)
      const recipients = await listAll(server, key(), `/api/v1/campaigns/${campaign.id}/recipients`, "recipients")
      const ids = recipients.map((r) => r.message_id as string)
      const status = (messageId: string, value: "sent" | "delivered" | "read" | "failed", second: number) =>
        MetaPayloads.statusPayload({
          phoneNumberId: channel.phone_number_id,
          displayPhoneNumber: "15550000000",
          externalId: `wamid.CMP${messageId}`,
          status: value,
          recipientId: "16505550000",
          callbackData: messageId,
          timestamp: new Date(Date.UTC(2026, 10, 23, 10, 0, second)),
          ...(value === "failed"
            ? { error: { code: 131026, title: "Message undeliverable", message: "Undeliverable" } }
            : {})
        })
      const [m1, m2, m3, m4, m5] = ids as [string, string, string, string, string]
      // Read first and the rest late; delivered twice at once; failed; sent; sent then failed; one left queued.
      const plays: ReadonlyArray<ReadonlyArray<Uint8Array>> = [
        [status(m1, "read", 30), status(m1, "delivered", 20), status(m1, "sent", 10), status(m1, "read", 30)],
        [status(m2, "delivered", 20), status(m2, "delivered", 20)],
        [status(m3, "failed", 10)],
        [status(m4, "sent", 10), status(m4, "sent", 10)],
        [status(m5, "sent", 10), status(m5, "failed", 15)]
      ]
      // Each message's statuses in order; the messages' webhooks all at once.
      await Promise.all(
        plays.map(async (payloads) => {
          for (const payload of payloads) expect((await postWebhook(server, payload)).status).toBe(200)
        })
      )
      await Promise.all([m2, m4].map((id) => postWebhook(server, status(id, "delivered", 25))))
      const shown = await readCampaign(server, key(), campaign.id)
      const listed = await listAll(server, key(), `/api/v1/campaigns/${campaign.id}/recipients`, "recipients")
      const count = (...statuses: Array<string>) => listed.filter((r) => statuses.includes(r.status)).length
      expect(shown.stats).toEqual({
        total: 6,
        queued: count("queued"),
        sent: count("sent", "delivered", "read"),
        delivered: count("delivered", "read"),
        read: count("read"),
        failed: count("failed"),
        skipped: 0,
        cancelled: 0
      })
      expect(shown.stats).toEqual({
        total: 6,
        queued: 1,
        sent: 3,
        delivered: 3,
        read: 1,
        failed: 2,
        skipped: 0,
        cancelled: 0
      })
      expect(shown.status).toBe("sending")
      // The last one cancelled: nothing is left queued, and the campaign ends cancelled.
      const cancelled = await call(server, "POST", `/api/v1/campaigns/${campaign.id}/cancel`, { auth: key() })
      expect(cancelled.body).toMatchObject({ status: "cancelled", stats: { total: 6, queued: 0, cancelled: 1 } })
      // Usage counts the three sent; the failed and the cancelled gave theirs back.
      expect(await used()).toBe(usedBefore + 3)
    })
  })

  describe(`campaigns with the sender at work, ${name}`, () => {
    let server: TestServer.Running
    let account: AccountFixture
    let dispose: () => Promise<void>

    beforeAll(async () => {
      const made = await wiring()
      dispose = made.dispose
      // Five sends a second per channel, so a campaign of 40 takes eight seconds to go out.
      server = await TestServer.start({ app: made.app, messaging: { senderOptions: { ratePerChannel: 5 } } })
      account = await makeAccount(server)
    })
    afterAll(async () => {
      await server?.close()
      await dispose?.()
    })

    const key = () => account.ownerKey

    it("stops a campaign cancelled mid-send: nothing more goes out and the unsent give their usage back", async () => {
      await createChannel(server, key())
      const tag = uniqueTag()
      await makeLeads(server, key(), 40, () => ({ tags: [tag] }))
      const campaign = await createCampaign(server, key(), { audience: audience([tag]) })
      expect((await call(server, "POST", `/api/v1/campaigns/${campaign.id}/queue`, { auth: key() })).status).toBe(200)
      await until(
        () => readCampaign(server, key(), campaign.id),
        (c) => c.stats.sent >= 5,
        15_000
      )
      const cancelled = await call(server, "POST", `/api/v1/campaigns/${campaign.id}/cancel`, { auth: key() })
      expect(cancelled.status, cancelled.text).toBe(200)
      expect(cancelled.body.status).toBe("cancelled")
      // Sends already begun finish; then nothing more goes out (receipts of what went may still arrive).
      const sending = (c: Record<string, any>) => {
        const { delivered: _delivered, read: _read, ...rest } = c.stats
        return rest
      }
      const settled = await until(
        () => readCampaign(server, key(), campaign.id),
        (c) => c.stats.queued === 0,
        10_000
      )
      await sleep(1500)
      const later = await readCampaign(server, key(), campaign.id)
      expect(sending(later)).toEqual(sending(settled))
      const { stats } = later
      expect(stats.cancelled).toBeGreaterThan(0)
      expect(stats.sent + stats.cancelled + stats.failed).toBe(40)
      expect(stats.sent).toBeLessThan(40)
      const usage = (await call(server, "GET", "/api/usage", { auth: key() })).body.usage.messages_used
      expect(usage).toBe(stats.sent)
    }, 60_000)

    it("sends a reply queued during a campaign before the campaign's messages still waiting", async () => {
      const account = await makeAccount(server)
      const channel = await createChannel(server, account.ownerKey)
      const tag = uniqueTag()
      await makeLeads(server, account.ownerKey, 100, () => ({ tags: [tag] }))
      const [replyTo] = await makeLeads(server, account.ownerKey, 1)
      const campaign = await createCampaign(server, account.ownerKey, { audience: audience([tag]) })
      const queued = await call(server, "POST", `/api/v1/campaigns/${campaign.id}/queue`, { auth: account.ownerKey })
      expect(queued.status).toBe(200)
      await until(
        () => readCampaign(server, account.ownerKey, campaign.id),
        (c) => c.stats.sent > 0,
        15_000
      )
      const reply = await call(server, "POST", "/api/v1/messages", {
        auth: account.ownerKey,
        json: {
          type: "template",
          template: { name: "order_update", language: "en_US" },
          lead_id: replyTo,
          channel_id: channel.id
        }
      })
      expect(reply.status, reply.text).toBe(201)
      const sent = await until(
        async () => (await call(server, "GET", `/api/v1/messages/${reply.body.id}`, { auth: account.ownerKey })).body,
        (m) => m.status !== "queued",
        30_000
      )
      expect(sent.status).not.toBe("queued")
      // At five a second, the campaign's 100 take 20 s: the reply went out with most of them still waiting.
      const during = await readCampaign(server, account.ownerKey, campaign.id)
      expect(during.stats.queued).toBeGreaterThan(30)
      await call(server, "POST", `/api/v1/campaigns/${campaign.id}/cancel`, { auth: account.ownerKey })
    }, 60_000)

    it("waits for scheduled_at before sending anything, then sends it all", async () => {
      const account = await makeAccount(server)
      await createChannel(server, account.ownerKey)
      const tag = uniqueTag()
      await makeLeads(server, account.ownerKey, 2, () => ({ tags: [tag] }))
      const start = new Date(Date.now() + 3600_000).toISOString()
      const campaign = await createCampaign(server, account.ownerKey, {
        audience: audience([tag]),
        scheduled_at: start
      })
      const queued = await call(server, "POST", `/api/v1/campaigns/${campaign.id}/queue`, { auth: account.ownerKey })
      expect(queued.body).toMatchObject({ status: "queued", scheduled_at: start, stats: { queued: 2 } })
      await sleep(1500)
      expect(await readCampaign(server, account.ownerKey, campaign.id)).toMatchObject({
        status: "queued",
        started_at: null,
        stats: { queued: 2, sent: 0 }
      })
      server.clock.advance("2 hours")
      const done = await until(
        () => readCampaign(server, account.ownerKey, campaign.id),
        (c) => c.status === "completed",
        15_000
      )
      expect(done.stats).toMatchObject({ total: 2, sent: 2, queued: 0 })
    }, 30_000)
  })
}
