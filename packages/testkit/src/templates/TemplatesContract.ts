import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import * as MetaTemplateWebhook from "@leadline/whatsapp-adapter/meta/MetaTemplateWebhook"
import { describe, expect, it } from "vitest"
import { createChannel } from "../channels/ChannelsResource.ts"
import { nextWaId, postWebhook } from "../conversations/ConversationsResource.ts"
import { makeAccount } from "../Fixtures.ts"
import { call } from "../Http.ts"
import type { ContractContext } from "../Slice.ts"
import type { Target } from "../TestServer.ts"
import {
  createTemplate,
  createWabaChannel,
  nextBusinessAccountId,
  nextTemplateName,
  postTemplate,
  readTemplate,
  reviewed,
  TEMPLATE_KEYS,
  TEMPLATES_PATH,
  templateBody
} from "./TemplatesResource.ts"

type Channel = Awaited<ReturnType<typeof createChannel>>

/** A customer writes in on `channel`: the conversation (its window open) and its lead. */
const conversationOn = async (target: Target, key: string, channel: Channel) => {
  const raw = MetaPayloads.inboundTextPayload({
    phoneNumberId: channel.phone_number_id,
    displayPhoneNumber: "16505551111",
    from: nextWaId(),
    name: "Ada Customer",
    text: "Hello",
    externalId: `wamid.${crypto.randomUUID()}`,
    timestamp: new Date(channel.created_at as string)
  })
  expect((await postWebhook(target, raw)).status).toBe(200)
  const list = await call(target, "GET", `/api/v1/conversations?channel_id=${channel.id}`, { auth: key })
  expect(list.body.conversations, list.text).toHaveLength(1)
  return list.body.conversations[0] as { id: string; lead_id: string }
}

/** A send's `template` for a stored template: as many body and header parameters as it takes. */
const sendOf = (template: { name: string; language: string }, body = 2, header = 1) => ({
  name: template.name,
  language: template.language,
  components: [
    ...(header === 0
      ? []
      : [{ type: "header", parameters: Array.from({ length: header }, () => ({ type: "text", text: "A-1" })) }]),
    ...(body === 0
      ? []
      : [{ type: "body", parameters: Array.from({ length: body }, (_, i) => ({ type: "text", text: `p${i}` })) }])
  ]
})

/** WhatsApp message templates (docs/contract-messaging.md §8.7), on the simulator's Meta. */
export const contract = (context: ContractContext) => {
  describe("templates", () => {
    const get = (key: string, path: string) => call(context.target, "GET", path, { auth: key })
    const post = (key: string, path: string, json?: unknown) =>
      call(context.target, "POST", path, json === undefined ? { auth: key } : { auth: key, json })
    const messagesOf = async (key: string, conversationId: string) =>
      (await get(key, `/api/v1/conversations/${conversationId}/messages`)).body.messages as ReadonlyArray<unknown>
    const sync = async (key: string) => {
      const reply = await post(key, "/api/v1/template-syncs")
      expect(reply.status, reply.text).toBe(200)
      return reply.body
    }

    /** An account with a WABA channel, two approved templates in it (one MARKETING), synced, and a conversation. */
    const synced = async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const channel = await createWabaChannel(context.target, key)
      const utility = await createTemplate(context.target, key, { channel_id: channel.id })
      const marketing = await createTemplate(context.target, key, {
        channel_id: channel.id,
        name: nextTemplateName("spring_offer"),
        category: "MARKETING",
        components: [{ type: "BODY", text: "Hi {{1}}, 20% off this week.", example: { body_text: [["Ada"]] } }]
      })
      await reviewed(context.target, key, utility.id)
      await reviewed(context.target, key, marketing.id)
      await sync(key)
      const conversation = await conversationOn(context.target, key, channel)
      return { account, key, channel, utility, marketing, conversation }
    }

    it("submits a template to the channel's business account: PENDING, then APPROVED by Meta's status webhook", async () => {
      const account = await makeAccount(context.target)
      const channel = await createWabaChannel(context.target, account.ownerKey)
      const body = templateBody({ channel_id: channel.id })
      const reply = await post(account.ownerKey, TEMPLATES_PATH, body)
      expect(reply.status, reply.text).toBe(201)
      expect(Object.keys(reply.body).sort()).toEqual(TEMPLATE_KEYS)
      expect(reply.body).toMatchObject({
        id: expect.stringMatching(/^tpl_/),
        business_account_id: channel.business_account_id,
        external_id: expect.stringMatching(/^\d+$/),
        name: body.name,
        language: "en_US",
        category: "UTILITY",
        status: "PENDING",
        quality: "UNKNOWN",
        rejected_reason: null,
        components: body.components
      })
      const approved = await reviewed(context.target, account.ownerKey, reply.body.id)
      expect(approved).toMatchObject({ id: reply.body.id, status: "APPROVED", rejected_reason: null })
      // Meta's status webhook is an event of the account, with the status before it.
      const events = await get(account.ownerKey, "/api/v1/events?type=template.updated")
      expect(events.status, events.text).toBe(200)
      expect(events.body.events).toHaveLength(1)
      expect(events.body.events[0]).toMatchObject({
        type: "template.updated",
        previous_attributes: { status: "PENDING" }
      })
      // The template as the API returns it, nothing more.
      expect(events.body.events[0].data).toEqual(approved)

      const list = await get(account.ownerKey, `${TEMPLATES_PATH}?status=APPROVED`)
      expect(list.status, list.text).toBe(200)
      expect(list.body.templates.map((t: { id: string }) => t.id)).toEqual([reply.body.id])
      expect(list.body.meta).toMatchObject({ total: 1, has_more: false })
      expect((await get(account.ownerKey, `${TEMPLATES_PATH}?status=PENDING`)).body.templates).toEqual([])
    })

    it("lists by name and language, filtered by status, name and business account; a status Meta has not is a 400", async () => {
      const { key, channel, utility, marketing } = await synced()
      const other = await createWabaChannel(context.target, key)
      const elsewhere = await createTemplate(context.target, key, {
        channel_id: other.id,
        name: utility.name,
        language: "es"
      })
      const names = async (query: string) => {
        const reply = await get(key, `${TEMPLATES_PATH}${query}`)
        expect(reply.status, reply.text).toBe(200)
        return reply.body.templates.map((t: { id: string }) => t.id)
      }
      expect(await names("")).toEqual([utility.id, elsewhere.id, marketing.id])
      expect(await names(`?name=${utility.name}`)).toEqual([utility.id, elsewhere.id])
      expect(await names(`?business_account_id=${channel.business_account_id}`)).toEqual([utility.id, marketing.id])
      expect(await names("?status=REJECTED")).toEqual([])
      expect(await names("?limit=1&offset=1")).toEqual([elsewhere.id])
      const bad = await get(key, `${TEMPLATES_PATH}?status=approved`)
      expect(bad.status, bad.text).toBe(400)
      expect(bad.body.details.map((d: { path: string }) => d.path)).toEqual(["status"])
    })

    it("a template Meta rejects is REJECTED with Meta's reason", async () => {
      const account = await makeAccount(context.target)
      const channel = await createWabaChannel(context.target, account.ownerKey)
      const made = await createTemplate(context.target, account.ownerKey, {
        channel_id: channel.id,
        name: nextTemplateName("rejected_offer")
      })
      expect(await reviewed(context.target, account.ownerKey, made.id)).toMatchObject({
        status: "REJECTED",
        rejected_reason: "INVALID_FORMAT"
      })
    })

    it("a sync replaces the stored list with Meta's, keeping each template's id, and answers the counts", async () => {
      const { key, channel, utility, marketing } = await synced()
      const again = await sync(key)
      expect(again).toEqual({
        business_accounts: [{ business_account_id: channel.business_account_id, templates: 2, removed: 0 }],
        templates: 2
      })
      const list = await get(key, TEMPLATES_PATH)
      expect(list.body.templates.map((t: { id: string }) => t.id).sort()).toEqual([utility.id, marketing.id].sort())
      expect(list.body.templates.every((t: { status: string }) => t.status === "APPROVED")).toBe(true)
    })

    it("a sync with no channel of a business account is a 409", async () => {
      const account = await makeAccount(context.target)
      await createChannel(context.target, account.ownerKey)
      const reply = await post(account.ownerKey, "/api/v1/template-syncs")
      expect(reply.status, reply.text).toBe(409)
      expect(reply.body.code).toBe("conflict")
    })

    it("a template send is checked against the synced list: name, language, status, parameters, each a 400 naming its field", async () => {
      const { key, utility, conversation } = await synced()
      const path = `/api/v1/conversations/${conversation.id}/messages`
      const before = await messagesOf(key, conversation.id)
      const refused = async (template: unknown, field: string, message: RegExp) => {
        const reply = await post(key, path, { type: "template", template })
        expect(reply.status, reply.text).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(reply.body.details).toEqual([{ path: field, message: expect.stringMatching(message) }])
      }
      await refused(
        { ...sendOf(utility), name: "no_such_template" },
        "template.name",
        /no template named no_such_template/
      )
      await refused({ ...sendOf(utility), language: "pt_BR" }, "template.language", /no pt_BR version \(it has en_US\)/)
      await refused(sendOf(utility, 1), "template.components", /takes 2 body parameters; 1 given/)
      await refused(sendOf(utility, 2, 0), "template.components", /takes 1 header parameter; 0 given/)
      expect(await messagesOf(key, conversation.id)).toEqual(before)

      const sent = await post(key, path, { type: "template", template: sendOf(utility) })
      expect(sent.status, sent.text).toBe(201)
      expect(sent.body.template).toMatchObject({ name: utility.name, language: "en_US" })
    })

    it("a template that is not APPROVED is refused naming template.name, with its status", async () => {
      const { key, channel, utility, conversation } = await synced()
      const paused = MetaTemplateWebhook.templatesPayload(
        channel.business_account_id as string,
        [
          {
            field: "message_template_status_update",
            event: "PAUSED",
            reason: "Low quality",
            externalId: utility.external_id,
            name: utility.name,
            language: "en_US"
          },
          {
            field: "message_template_quality_update",
            previous: "GREEN",
            quality: "RED",
            externalId: utility.external_id,
            name: utility.name,
            language: "en_US"
          }
        ],
        new Date()
      )
      expect((await postWebhook(context.target, paused)).status).toBe(200)
      expect(await readTemplate(context.target, key, utility.id)).toMatchObject({
        status: "PAUSED",
        quality: "RED",
        rejected_reason: "Low quality"
      })
      const reply = await post(key, `/api/v1/conversations/${conversation.id}/messages`, {
        type: "template",
        template: sendOf(utility)
      })
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body.details).toEqual([
        { path: "template.name", message: `${utility.name} (en_US) is PAUSED, not APPROVED` }
      ])

      const category = MetaTemplateWebhook.templatesPayload(
        channel.business_account_id as string,
        [
          {
            field: "template_category_update",
            previous: "UTILITY",
            category: "MARKETING",
            externalId: utility.external_id,
            name: utility.name,
            language: "en_US"
          }
        ],
        new Date()
      )
      expect((await postWebhook(context.target, category)).status).toBe(200)
      expect((await readTemplate(context.target, key, utility.id)).category).toBe("MARKETING")
    })

    it("a channel without a business account, or whose list was never synced, is not checked: Meta judges", async () => {
      const account = await makeAccount(context.target)
      const plain = await createChannel(context.target, account.ownerKey)
      const unsynced = await createWabaChannel(context.target, account.ownerKey)
      await createTemplate(context.target, account.ownerKey, { channel_id: unsynced.id })
      for (const channel of [plain, unsynced]) {
        const conversation = await conversationOn(context.target, account.ownerKey, channel)
        const reply = await post(account.ownerKey, `/api/v1/conversations/${conversation.id}/messages`, {
          type: "template",
          template: { name: "anything_at_all", language: "de" }
        })
        expect(reply.status, reply.text).toBe(201)
      }
    })

    it("a MARKETING template to an opted-out lead is a 409 lead_opted_out; a UTILITY one and texts in the window still go", async () => {
      const { key, utility, marketing, conversation } = await synced()
      const optOut = await call(context.target, "PATCH", `/api/v1/leads/${conversation.lead_id}`, {
        auth: key,
        json: { marketing_opt_out: { reason: "asked by phone" } }
      })
      expect(optOut.status, optOut.text).toBe(200)
      const before = await messagesOf(key, conversation.id)
      const refused = await post(key, "/api/v1/messages", {
        lead_id: conversation.lead_id,
        type: "template",
        template: sendOf(marketing, 1, 0)
      })
      expect(refused.status, refused.text).toBe(409)
      expect(refused.body).toEqual({
        error: `Lead ${conversation.lead_id} opted out of marketing: ${marketing.name} is a MARKETING template`,
        code: "lead_opted_out"
      })
      expect(await messagesOf(key, conversation.id)).toEqual(before)

      const path = `/api/v1/conversations/${conversation.id}/messages`
      expect((await post(key, path, { type: "template", template: sendOf(utility) })).status).toBe(201)
      expect((await post(key, path, { type: "text", text: "Your order is on its way" })).status).toBe(201)
    })

    it("a campaign naming a template the list refuses is a 400 naming the field at create, PATCH and queue", async () => {
      const { key, channel, utility, marketing } = await synced()
      const campaign = (template: unknown) => ({
        name: "Spring",
        channel_id: channel.id,
        template,
        audience: { tags: ["spring"], statuses: [], lead_ids: [], exclude_tags: [] }
      })
      const refused = await post(key, "/api/v1/campaigns", campaign({ ...sendOf(marketing, 1, 0), language: "es" }))
      expect(refused.status, refused.text).toBe(400)
      expect(refused.body.details).toEqual([
        { path: "template.language", message: expect.stringMatching(/no es version/) }
      ])
      expect((await get(key, "/api/v1/campaigns")).body.campaigns).toEqual([])

      const made = await post(key, "/api/v1/campaigns", campaign(sendOf(marketing, 1, 0)))
      expect(made.status, made.text).toBe(201)
      const patched = await call(context.target, "PATCH", `/api/v1/campaigns/${made.body.id}`, {
        auth: key,
        json: { template: sendOf(utility, 1) }
      })
      expect(patched.status, patched.text).toBe(400)
      expect(patched.body.details).toEqual([
        { path: "template.components", message: expect.stringMatching(/takes 2 body parameters; 1 given/) }
      ])
      expect((await get(key, `/api/v1/campaigns/${made.body.id}`)).body.template).toEqual(sendOf(marketing, 1, 0))

      // Paused after the draft was made: the queue refuses it before anything is queued.
      const paused = MetaTemplateWebhook.templatesPayload(
        channel.business_account_id as string,
        [
          {
            field: "message_template_status_update",
            event: "PAUSED",
            externalId: marketing.external_id,
            name: marketing.name,
            language: "en_US"
          }
        ],
        new Date()
      )
      expect((await postWebhook(context.target, paused)).status).toBe(200)
      const queued = await post(key, `/api/v1/campaigns/${made.body.id}/queue`)
      expect(queued.status, queued.text).toBe(400)
      expect(queued.body.details).toEqual([
        { path: "template.name", message: `${marketing.name} (en_US) is PAUSED, not APPROVED` }
      ])
      expect((await get(key, `/api/v1/campaigns/${made.body.id}`)).body.status).toBe("draft")
    })

    it("every field of a create has a 400 naming it, and nothing is created", async () => {
      const account = await makeAccount(context.target)
      const key = account.ownerKey
      const channel = await createWabaChannel(context.target, key)
      const plain = await createChannel(context.target, key)
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [{ channel_id: "ch_nope" }, "channel_id"],
        [{ channel_id: plain.id }, "channel_id"],
        [{ channel_id: channel.id, name: "Order Update" }, "name"],
        [{ channel_id: channel.id, name: "" }, "name"],
        [{ channel_id: channel.id, language: "english" }, "language"],
        [{ channel_id: channel.id, category: "PROMOTIONAL" }, "category"],
        [{ channel_id: channel.id, components: [] }, "components"],
        [{ channel_id: channel.id, components: [{ type: "FOOTER", text: "Bye" }] }, "components"],
        [{ channel_id: channel.id, components: [{ type: "BODY", text: "Hi {{2}}" }] }, "components.0"],
        [{ channel_id: channel.id, components: [{ type: "BODY", text: "" }] }, "components.0"],
        [
          {
            channel_id: channel.id,
            components: [
              { type: "BODY", text: "Hi" },
              { type: "BUTTONS", buttons: [] }
            ]
          },
          "components.1"
        ],
        [{ channel_id: channel.id, components: [{ type: "CAROUSEL" }] }, "components.0"],
        [{ channel_id: channel.id, colour: "red" }, "colour"]
      ]
      for (const [fields, field] of cases) {
        const reply = await postTemplate(context.target, key, fields)
        expect(reply.status, `${JSON.stringify(fields)}: ${reply.text}`).toBe(400)
        expect(reply.body.code).toBe("validation_error")
        expect(
          reply.body.details.map((d: { path: string }) => d.path),
          JSON.stringify(fields)
        ).toContain(field)
      }
      expect((await get(key, TEMPLATES_PATH)).body.templates).toEqual([])
    })

    it("a name taken in that language is a 409; the same name in another language is a new template", async () => {
      const account = await makeAccount(context.target)
      const channel = await createWabaChannel(context.target, account.ownerKey)
      const first = await createTemplate(context.target, account.ownerKey, { channel_id: channel.id })
      const again = await postTemplate(context.target, account.ownerKey, { channel_id: channel.id, name: first.name })
      expect(again.status, again.text).toBe(409)
      const spanish = await createTemplate(context.target, account.ownerKey, {
        channel_id: channel.id,
        name: first.name,
        language: "es"
      })
      expect(spanish.id).not.toBe(first.id)
    })

    it("a delete removes the template at Meta and here: a sync does not bring it back", async () => {
      const { key, channel, utility, marketing } = await synced()
      const reply = await call(context.target, "DELETE", `${TEMPLATES_PATH}/${utility.id}`, { auth: key })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toEqual({ id: utility.id, deleted: true })
      expect((await get(key, `${TEMPLATES_PATH}/${utility.id}`)).status).toBe(404)
      expect(await sync(key)).toEqual({
        business_accounts: [{ business_account_id: channel.business_account_id, templates: 1, removed: 0 }],
        templates: 1
      })
      expect((await get(key, TEMPLATES_PATH)).body.templates.map((t: { id: string }) => t.id)).toEqual([marketing.id])
    })

    it("a status webhook for another business account's template changes nothing here", async () => {
      const { key, utility } = await synced()
      const raw = MetaTemplateWebhook.templatesPayload(
        nextBusinessAccountId(),
        [
          {
            field: "message_template_status_update",
            event: "DISABLED",
            externalId: utility.external_id,
            name: utility.name,
            language: "en_US"
          }
        ],
        new Date()
      )
      // Answered once applied: the webhook commits before Meta gets its 200.
      expect((await postWebhook(context.target, raw)).status).toBe(200)
      expect((await readTemplate(context.target, key, utility.id)).status).toBe("APPROVED")
    })
  })
}
