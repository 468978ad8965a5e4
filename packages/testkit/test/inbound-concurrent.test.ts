import { describe, expect, it } from "vitest"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import { createChannel } from "../src/channels/ChannelsResource.ts"
import { nextWaId, postWebhook } from "../src/conversations/ConversationsResource.ts"
import { call } from "../src/Http.ts"
import * as Wirings from "../src/Wirings.ts"

/**
 * Meta sends one message per webhook, many at once: the server stores the POSTs that arrive
 * together in one transaction (core's group commit), and each is acknowledged only once its
 * messages are committed. Readable at the acknowledgement, each wamid once, one lead per
 * customer however many of their first messages arrive at the same moment.
 */
for (const [name, wiring] of Wirings.wirings) {
  describe(`concurrent inbound webhooks ${name}`, () => {
    const stage = Wirings.stage(wiring)

    it("stores every message once, readable when acknowledged, with one lead and one thread per customer", async () => {
      const channel = await createChannel(stage.server, stage.account.ownerKey)
      const customers = Array.from({ length: 8 }, () => nextWaId())
      const at = new Date(channel.created_at as string)
      const bodies = Array.from({ length: 48 }, (_, i) =>
        MetaPayloads.inboundTextPayload({
          phoneNumberId: channel.phone_number_id,
          displayPhoneNumber: "16505551111",
          from: customers[i % customers.length]!,
          name: `Customer ${i % customers.length}`,
          text: `Message ${i}`,
          externalId: `wamid.concurrent.${channel.id}.${i}`,
          timestamp: new Date(at.getTime() + i * 1000)
        })
      )
      // Meta's redeliveries: the first twelve again, racing their originals.
      const posted = [...bodies, ...bodies.slice(0, 12)]
      const replies = await Promise.all(posted.map((raw) => postWebhook(stage.server, raw)))
      expect(replies.map((reply) => reply.status)).toEqual(posted.map(() => 200))

      const threads = await call(stage.server, "GET", `/api/v1/conversations?channel_id=${channel.id}&limit=100`, {
        auth: stage.account.ownerKey
      })
      expect(threads.status, threads.text).toBe(200)
      expect(threads.body.conversations).toHaveLength(customers.length)
      expect(new Set(threads.body.conversations.map((c: { lead_id: string }) => c.lead_id)).size).toBe(customers.length)
      const texts: Array<string> = []
      for (const conversation of threads.body.conversations as Array<{ id: string }>) {
        const messages = await call(
          stage.server,
          "GET",
          `/api/v1/conversations/${conversation.id}/messages?limit=100`,
          { auth: stage.account.ownerKey }
        )
        expect(messages.status, messages.text).toBe(200)
        expect(messages.body.messages).toHaveLength(bodies.length / customers.length)
        texts.push(...messages.body.messages.map((m: { text: string }) => m.text))
      }
      expect(texts.sort()).toEqual(bodies.map((_, i) => `Message ${i}`).sort())
    })
  })
}
