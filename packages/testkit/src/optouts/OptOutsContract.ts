import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import { describe, expect, it } from "vitest"
import { createCampaign, makeLeads, readCampaign } from "../campaigns/CampaignsResource.ts"
import { makeConversation, postWebhook } from "../conversations/ConversationsResource.ts"
import { makeAccount } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { listAll, until } from "../internal/wire.ts"
import { eventsOf } from "../eventlog/EventsResource.ts"
import type { ContractContext } from "../Slice.ts"
import { OPT_OUTS_PATH, readOptOuts } from "./OptOutsResource.ts"

/** Marketing opt-outs (docs/contract-messaging.md §8.6): keywords, the lead's field, campaigns skipping, confirmations. */
export const contract = (context: ContractContext) => {
  describe("opt-outs", () => {
    const get = (key: string, path: string) => call(context.target, "GET", path, { auth: key })
    const patch = (key: string, path: string, json: unknown) => call(context.target, "PATCH", path, { auth: key, json })

    /** A customer of a new account writes `text` after a first message; the lead as it is then. */
    const writeIn = async (key: string, texts: ReadonlyArray<string>) => {
      const { channel, from, conversation } = await makeConversation(context.target, key, "Hi")
      for (const text of texts) {
        const raw = MetaPayloads.inboundTextPayload({
          phoneNumberId: channel.phone_number_id,
          displayPhoneNumber: "16505551111",
          from,
          name: "Ada Customer",
          text,
          externalId: `wamid.${crypto.randomUUID()}`,
          timestamp: new Date(channel.created_at as string)
        })
        expect((await postWebhook(context.target, raw)).status).toBe(200)
      }
      const lead = await get(key, `/api/v1/leads/${conversation.lead_id}`)
      expect(lead.status, lead.text).toBe(200)
      return { lead: lead.body as Record<string, any>, conversation, channel }
    }

    it("answers the default keywords until an account sets its own", async () => {
      const account = await makeAccount(context.target)
      const settings = await readOptOuts(context.target, account.ownerKey)
      expect(settings.opt_out_keywords).toEqual(expect.arrayContaining(["STOP", "UNSUBSCRIBE", "PARAR", "BAJA"]))
      expect(settings.opt_in_keywords).toEqual(expect.arrayContaining(["START"]))
      expect(settings.opt_out_keywords).not.toContain("YES")
      expect(settings).toMatchObject({ opt_out_reply: null, opt_in_reply: null })
    })

    it("a lead that sends a keyword, as the whole text, opts out; an opt-in keyword brings it back", async () => {
      const account = await makeAccount(context.target)
      const { lead: asked } = await writeIn(account.ownerKey, ["please stop sending me offers"])
      expect(asked.marketing_opt_out).toBeNull()

      const { lead } = await writeIn(account.ownerKey, ["  Stop! "])
      expect(lead.marketing_opt_out).toEqual({ at: expect.any(String), source: "whatsapp_keyword", reason: "STOP" })
      expect(lead.updated_at >= lead.marketing_opt_out.at).toBe(true)

      const back = await writeIn(account.ownerKey, ["stop", "start"])
      expect(back.lead.marketing_opt_out).toBeNull()
    })

    it("a second STOP keeps the first opt-out's time", async () => {
      const account = await makeAccount(context.target)
      const { lead, channel } = await writeIn(account.ownerKey, ["STOP"])
      const raw = MetaPayloads.inboundTextPayload({
        phoneNumberId: channel.phone_number_id,
        displayPhoneNumber: "16505551111",
        from: (lead.phone as string).slice(1),
        name: "Ada Customer",
        text: "UNSUBSCRIBE",
        externalId: `wamid.${crypto.randomUUID()}`,
        timestamp: new Date(channel.created_at as string)
      })
      expect((await postWebhook(context.target, raw)).status).toBe(200)
      const again = await get(account.ownerKey, `/api/v1/leads/${lead.id}`)
      expect(again.body.marketing_opt_out).toEqual(lead.marketing_opt_out)
    })

    it("uses the account's own keywords, compared in capitals, and sends its confirmations as system messages", async () => {
      const account = await makeAccount(context.target)
      const set = await patch(account.ownerKey, OPT_OUTS_PATH, {
        opt_out_keywords: ["basta", "Chega"],
        opt_in_keywords: ["volto"],
        opt_out_reply: "Pronto: você não receberá mais ofertas. Envie VOLTO para voltar."
      })
      expect(set.status, set.text).toBe(200)
      expect(set.body).toEqual({
        opt_out_keywords: ["BASTA", "CHEGA"],
        opt_in_keywords: ["VOLTO"],
        opt_out_reply: "Pronto: você não receberá mais ofertas. Envie VOLTO para voltar.",
        opt_in_reply: null
      })
      expect(await readOptOuts(context.target, account.ownerKey)).toEqual(set.body)

      // STOP is not one of this account's keywords any more.
      const { lead: kept } = await writeIn(account.ownerKey, ["STOP"])
      expect(kept.marketing_opt_out).toBeNull()

      const { lead, conversation } = await writeIn(account.ownerKey, ["chega."])
      expect(lead.marketing_opt_out).toMatchObject({ source: "whatsapp_keyword", reason: "CHEGA" })
      const messages = await listAll(
        context.target,
        account.ownerKey,
        `/api/v1/conversations/${conversation.id}/messages`,
        "messages"
      )
      const confirmations = messages.filter((message: any) => message.sender_type === "system")
      expect(confirmations).toHaveLength(1)
      expect(confirmations[0]).toMatchObject({
        direction: "outbound",
        type: "text",
        text: "Pronto: você não receberá mais ofertas. Envie VOLTO para voltar.",
        sender_id: null
      })
    })

    it("refuses bad settings with the field named, and changes nothing", async () => {
      const account = await makeAccount(context.target)
      const before = await readOptOuts(context.target, account.ownerKey)
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ opt_out_keywords: ["STOP"], opt_in_keywords: ["stop"] }, "opt_in_keywords.0"],
        [{ opt_out_keywords: ["ok", ""] }, "opt_out_keywords.1"],
        [{ opt_out_keywords: ["!!!"] }, "opt_out_keywords.0"],
        [{ opt_in_keywords: ["x".repeat(31)] }, "opt_in_keywords.0"],
        [{ opt_out_keywords: "STOP" }, "opt_out_keywords"],
        [{ opt_out_reply: "" }, "opt_out_reply"],
        [{ opt_in_reply: "x".repeat(1025) }, "opt_in_reply"]
      ]
      for (const [body, path] of cases) {
        const reply = await patch(account.ownerKey, OPT_OUTS_PATH, body)
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(reply.body.details.map((detail: { path: string }) => detail.path)).toContain(path)
      }
      expect(await readOptOuts(context.target, account.ownerKey)).toEqual(before)
    })

    it("a PATCH opts a lead out with a reason, and back in with null", async () => {
      const account = await makeAccount(context.target)
      const [id] = await makeLeads(context.target, account.ownerKey, 1)
      const out = await patch(account.ownerKey, `/api/v1/leads/${id}`, {
        marketing_opt_out: { reason: "Asked on the phone" }
      })
      expect(out.status, out.text).toBe(200)
      expect(out.body.marketing_opt_out).toEqual({
        at: out.body.updated_at,
        source: "api",
        reason: "Asked on the phone"
      })
      const tooLong = await patch(account.ownerKey, `/api/v1/leads/${id}`, {
        marketing_opt_out: { reason: "x".repeat(501) }
      })
      expect(tooLong.status).toBe(400)
      expect(tooLong.body.details[0].path).toBe("marketing_opt_out.reason")
      expect((await get(account.ownerKey, `/api/v1/leads/${id}`)).body).toEqual(out.body)

      const back = await patch(account.ownerKey, `/api/v1/leads/${id}`, { marketing_opt_out: null })
      expect(back.status, back.text).toBe(200)
      expect(back.body.marketing_opt_out).toBeNull()
    })

    it("a campaign skips opted-out leads with opted_out, and counts them as skipped", async () => {
      const account = await makeAccount(context.target)
      const { lead: optedOut, channel } = await writeIn(account.ownerKey, ["STOP"])
      const [optedIn] = await makeLeads(context.target, account.ownerKey, 1)
      const campaign = await createCampaign(context.target, account.ownerKey, {
        channel_id: channel.id,
        audience: { lead_ids: [optedOut.id, optedIn] }
      })
      const queued = await call(context.target, "POST", `/api/v1/campaigns/${campaign.id}/queue`, {
        auth: account.ownerKey
      })
      expect(queued.status, queued.text).toBe(200)
      expect(queued.body.stats).toMatchObject({ total: 2, skipped: 1 })
      const recipients = await listAll(
        context.target,
        account.ownerKey,
        `/api/v1/campaigns/${campaign.id}/recipients`,
        "recipients"
      )
      const byLead = new Map(recipients.map((recipient: any) => [recipient.lead_id, recipient]))
      expect(byLead.get(optedOut.id)).toMatchObject({
        status: "skipped",
        message_id: null,
        error: { code: "opted_out", message: "The lead opted out of marketing", provider_code: null }
      })
      expect(byLead.get(optedIn)!.message_id).not.toBeNull()
      const done = await until(
        () => readCampaign(context.target, account.ownerKey, campaign.id),
        (c) => c.status === "completed"
      )
      expect(done.stats).toMatchObject({ total: 2, skipped: 1 })
    })

    it("a campaign whose every recipient opted out completes as it is queued, with both events", async () => {
      const account = await makeAccount(context.target)
      const { lead: optedOut, channel } = await writeIn(account.ownerKey, ["STOP"])
      const campaign = await createCampaign(context.target, account.ownerKey, {
        channel_id: channel.id,
        audience: { lead_ids: [optedOut.id] }
      })
      const queued = await call(context.target, "POST", `/api/v1/campaigns/${campaign.id}/queue`, {
        auth: account.ownerKey
      })
      expect(queued.status, queued.text).toBe(200)
      expect(queued.body).toMatchObject({ status: "completed", stats: { total: 1, skipped: 1, queued: 0 } })
      const { events } = await eventsOf(context.target, account.ownerKey, "?type=campaign.*")
      expect(events.map((event) => [event.type, event.data.status])).toEqual([
        ["campaign.completed", "completed"],
        ["campaign.queued", "completed"]
      ])
    })
  })
}
