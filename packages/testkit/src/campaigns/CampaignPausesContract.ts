import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import { describe, expect, it } from "vitest"
import { createChannel, readChannel } from "../channels/ChannelsResource.ts"
import { makeConversation, postWebhook } from "../conversations/ConversationsResource.ts"
import { makeAccount } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { sleep, until } from "../internal/wire.ts"
import type { ContractContext } from "../Slice.ts"
import { createCampaign, makeLeads, readCampaign } from "./CampaignsResource.ts"

/**
 * A channel's health as Meta's account webhooks bring it (docs/contract-messaging.md §3.1), and the
 * campaigns that wait while Meta flags or restricts it (§8.2, "paused"), on any wiring.
 */
export const contract = (context: ContractContext) => {
  describe("campaigns paused by the channel's health", () => {
    const post = async (raw: Uint8Array) => expect((await postWebhook(context.target, raw)).status).toBe(200)

    /** An account with a channel on a business account of its own, and a draft to two new leads. */
    const setUp = async () => {
      const account = await makeAccount(context.target)
      const businessAccountId = `${Date.now()}${Math.floor(Math.random() * 1e6)}`
      const channel = await createChannel(context.target, account.ownerKey, {
        business_account_id: businessAccountId,
        display_phone_number: "+1 650-555-1111"
      })
      const leads = await makeLeads(context.target, account.ownerKey, 2)
      const campaign = await createCampaign(context.target, account.ownerKey, {
        channel_id: channel.id,
        audience: { lead_ids: leads }
      })
      return { account, businessAccountId, channel, campaign }
    }

    it("a new channel's health is unknown, with no limit and no restriction", async () => {
      const { account, channel } = await setUp()
      expect(await readChannel(context.target, account.ownerKey, channel.id)).toMatchObject({
        quality_rating: "unknown",
        messaging_limit_tier: null,
        restrictions: []
      })
    })

    it("a flagged number holds its campaigns (paused, nothing sent) until Meta unflags it; replies still go", async () => {
      const { account, businessAccountId, channel, campaign } = await setUp()
      const at = new Date()
      await post(
        MetaPayloads.qualityUpdatePayload({
          businessAccountId,
          displayPhoneNumber: "16505551111",
          event: "FLAGGED",
          currentLimit: "TIER_1K",
          at
        })
      )
      const flagged = await readChannel(context.target, account.ownerKey, channel.id)
      expect(flagged).toMatchObject({ quality_rating: "red", messaging_limit_tier: "TIER_1K", restrictions: [] })
      // Meta's word is an event of the account, with what the channel held before.
      const events = await call(context.target, "GET", "/api/v1/events?type=channel.health_changed", {
        auth: account.ownerKey
      })
      expect(events.status, events.text).toBe(200)
      expect(events.body.events).toHaveLength(1)
      expect(events.body.events[0]).toMatchObject({
        type: "channel.health_changed",
        data: { id: channel.id, quality_rating: "red", messaging_limit_tier: "TIER_1K" },
        previous_attributes: { quality_rating: "unknown", messaging_limit_tier: null }
      })
      expect(Object.keys(events.body.events[0].previous_attributes).sort()).toEqual([
        "messaging_limit_tier",
        "quality_rating"
      ])

      const queued = await call(context.target, "POST", `/api/v1/campaigns/${campaign.id}/queue`, {
        auth: account.ownerKey
      })
      expect(queued.status, queued.text).toBe(200)
      const paused = { reason: "channel_flagged", message: "Meta flagged the channel's number for low quality" }
      expect(queued.body.paused).toEqual(paused)
      // The simulator would have sent them within a second: they wait.
      await sleep(1500)
      const waiting = await readCampaign(context.target, account.ownerKey, campaign.id)
      expect(waiting).toMatchObject({ status: "queued", paused, stats: { total: 2, queued: 2, sent: 0 } })

      // A person's reply on the same channel is not a campaign's: it goes.
      const { conversation } = await makeConversation(context.target, account.ownerKey)
      const reply = await call(context.target, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
        auth: account.ownerKey,
        json: { type: "text", text: "Still here for you" }
      })
      expect(reply.status, reply.text).toBe(201)
      await until(
        async () =>
          (await call(context.target, "GET", `/api/v1/messages/${reply.body.id}`, { auth: account.ownerKey })).body,
        (message) => message.status !== "queued"
      )

      await post(
        MetaPayloads.qualityUpdatePayload({
          businessAccountId,
          displayPhoneNumber: "16505551111",
          event: "UNFLAGGED",
          currentLimit: "TIER_1K",
          at: new Date()
        })
      )
      expect(await readChannel(context.target, account.ownerKey, channel.id)).toMatchObject({
        quality_rating: "yellow"
      })
      const done = await until(
        () => readCampaign(context.target, account.ownerKey, campaign.id),
        (c) => c.status === "completed",
        15_000
      )
      expect(done).toMatchObject({ paused: null, stats: { total: 2, queued: 0, sent: 2 } })
    })

    it("a restriction of business-initiated messages pauses a sending campaign; lifting it resumes", async () => {
      const { account, businessAccountId, channel, campaign } = await setUp()
      // From the server's clock, which an earlier test may have moved (a channel's `created_at` is its time).
      const until_ = new Date(Date.parse(channel.created_at as string) + 3600_000)
      await post(
        MetaPayloads.restrictionPayload({
          businessAccountId,
          phoneNumber: "16505551111",
          restrictions: [{ type: "RESTRICTED_BIZ_INITIATED_MESSAGING", expiration: until_ }],
          at: new Date()
        })
      )
      const restricted = await readChannel(context.target, account.ownerKey, channel.id)
      expect(restricted.restrictions).toEqual([
        {
          type: "RESTRICTED_BIZ_INITIATED_MESSAGING",
          until: new Date(Math.floor(until_.getTime() / 1000) * 1000).toISOString(),
          since: expect.any(String)
        }
      ])
      const queued = await call(context.target, "POST", `/api/v1/campaigns/${campaign.id}/queue`, {
        auth: account.ownerKey
      })
      expect(queued.body.paused).toMatchObject({ reason: "channel_restricted" })
      await sleep(1000)
      expect((await readCampaign(context.target, account.ownerKey, campaign.id)).stats.sent).toBe(0)

      await post(
        MetaPayloads.restrictionPayload({
          businessAccountId,
          phoneNumber: "16505551111",
          restrictions: [],
          at: new Date()
        })
      )
      expect((await readChannel(context.target, account.ownerKey, channel.id)).restrictions).toEqual([])
      const done = await until(
        () => readCampaign(context.target, account.ownerKey, campaign.id),
        (c) => c.status === "completed",
        15_000
      )
      expect(done).toMatchObject({ paused: null, stats: { sent: 2 } })
    })

    it("a disabled business account holds the campaigns of all its numbers; a number of another account is untouched", async () => {
      const { account, businessAccountId, channel, campaign } = await setUp()
      const other = await setUp()
      await post(MetaPayloads.banPayload({ businessAccountId, state: "DISABLE", at: new Date() }))
      expect((await readChannel(context.target, account.ownerKey, channel.id)).restrictions).toMatchObject([
        { type: "ACCOUNT_DISABLED", until: null }
      ])
      expect((await readChannel(context.target, other.account.ownerKey, other.channel.id)).restrictions).toEqual([])
      const queued = await call(context.target, "POST", `/api/v1/campaigns/${campaign.id}/queue`, {
        auth: account.ownerKey
      })
      expect(queued.body.paused).toEqual({
        reason: "channel_restricted",
        message: "Meta restricted the channel (ACCOUNT_DISABLED)"
      })
      await post(MetaPayloads.banPayload({ businessAccountId, state: "REINSTATE", at: new Date() }))
      await until(
        () => readCampaign(context.target, account.ownerKey, campaign.id),
        (c) => c.status === "completed",
        15_000
      )
    })
  })
}
