import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as MetaPayloads from "@leadline/whatsapp-adapter/meta/MetaPayloads"
import { type AccountFixture, makeAccount } from "../src/Fixtures.ts"
import { call } from "../src/Http.ts"
import * as MockGraph from "../src/whatsapp/MockGraph.ts"
import * as CloudTransport from "@leadline/whatsapp-adapter/cloud/CloudTransport"
import { createChannel } from "../src/channels/ChannelsResource.ts"
import { makeConversation, nextWaId, postWebhook, TEMPLATE_SEND } from "../src/conversations/ConversationsResource.ts"
import { eventsOf } from "../src/eventlog/EventsResource.ts"
import * as TestServer from "../src/TestServer.ts"
import * as Wirings from "../src/Wirings.ts"
import { until } from "../src/internal/wire.ts"

const waitUntil = <A>(probe: () => Promise<A>, done: (value: A) => boolean) => until(probe, done, 15_000)

/**
 * Sending end to end: the API queues, the sender in the server hands the message to the
 * simulator, which plays WhatsApp's status webhooks back through the real inbound route;
 * the events of each step reach a receiver on a real socket, signed as lead events are.
 */

for (const [name, wiring] of Wirings.wirings) {
  describe(`sending ${name}`, () => {
    const stage = Wirings.stage(wiring, { messaging: { snoozeCheckMillis: 100 } })

    const message = async (id: string) =>
      (await call(stage.server, "GET", `/api/v1/messages/${id}`, { auth: stage.account.ownerKey })).body
    const used = async () =>
      (await call(stage.server, "GET", "/api/usage", { auth: stage.account.ownerKey })).body.usage
        .messages_used as number

    /** A template to a new lead with this phone: the simulator's scripted endings decide its fate. */
    const sendToNewLead = async (channelId: string, name: string, phone: string) => {
      const lead = await call(stage.server, "POST", "/api/v1/leads", {
        auth: stage.account.ownerKey,
        json: { name, phone }
      })
      const sent = await call(stage.server, "POST", "/api/v1/messages", {
        auth: stage.account.ownerKey,
        json: { ...TEMPLATE_SEND, lead_id: lead.body.id, channel_id: channelId }
      })
      expect(sent.status, sent.text).toBe(201)
      return sent.body.id as string
    }

    it("goes queued → sent → delivered → read, with message.sent and two message.status_changed, signed", async () => {
      const endpoint = stage.receiver.endpoint("/messages")
      const registered = await call(stage.server, "POST", "/api/webhooks/endpoints", {
        auth: stage.account.ownerKey,
        json: { url: endpoint.url, events: ["message.sent", "message.status_changed"] }
      })
      expect(registered.status, registered.text).toBe(201)
      endpoint.setSecret(registered.body.secret)
      const { conversation } = await makeConversation(stage.server, stage.account.ownerKey)
      const sent = await call(stage.server, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
        auth: stage.account.ownerKey,
        json: { type: "text", text: "On its way" }
      })
      expect(sent.status, sent.text).toBe(201)
      expect(sent.body.status).toBe("queued")
      const final = await waitUntil(
        () => message(sent.body.id),
        (m) => m.status === "read"
      )
      expect(final).toMatchObject({ status: "read", error: null })
      expect(final.external_id).toMatch(/^wamid\.SIM/)
      for (const field of ["sent_at", "delivered_at", "read_at"]) expect(final[field], field).not.toBeNull()
      const requests = await endpoint.waitFor(3, 10_000)
      const events = requests.map((request) => JSON.parse(request.body))
      expect(events.map((event) => event.type).sort()).toEqual([
        "message.sent",
        "message.status_changed",
        "message.status_changed"
      ])
      for (const request of requests) expect(request.verified).toEqual({ service: true, standard: true })
      const accepted = events.find((event) => event.type === "message.sent")!
      expect(accepted.data).toMatchObject({ id: sent.body.id, external_id: final.external_id })
      expect(
        events
          .filter((event) => event.type === "message.status_changed")
          .map((event) => event.data.status)
          .sort()
      ).toEqual(["delivered", "read"])
    })

    it("reopens a conversation when its snooze runs out, and not before", async () => {
      const snooze = async (minutes: number) => {
        const { conversation, channel } = await makeConversation(stage.server, stage.account.ownerKey)
        const until = new Date(Date.parse(channel.created_at as string) + minutes * 60_000).toISOString()
        const snoozed = await call(stage.server, "PATCH", `/api/v1/conversations/${conversation.id}`, {
          auth: stage.account.ownerKey,
          json: { status: "snoozed", snoozed_until: until }
        })
        expect(snoozed.body).toMatchObject({ status: "snoozed", snoozed_until: until })
        const read = async () =>
          (
            await call(stage.server, "GET", `/api/v1/conversations/${conversation.id}`, {
              auth: stage.account.ownerKey
            })
          ).body
        return Object.assign(read, { id: conversation.id as string, until })
      }
      const soon = await snooze(1)
      const later = await snooze(60)
      stage.server.clock.advance("10 minutes")
      // The soon one opening shows a check ran after the clock moved; the later one's time has not come.
      expect(await waitUntil(soon, (c) => c.status === "open")).toMatchObject({ status: "open", snoozed_until: null })
      expect((await later()).status).toBe("snoozed")
      stage.server.clock.advance("2 hours")
      expect(await waitUntil(later, (c) => c.status === "open")).toMatchObject({ status: "open", snoozed_until: null })
      // Each wake is the thread's status change, with the snooze it had.
      const woken = (await eventsOf(stage.server, stage.account.ownerKey, "?type=conversation.status_changed")).events
      for (const thread of [soon, later]) {
        const event = woken.find((each) => each.data.id === thread.id)
        expect(event?.data).toMatchObject({ status: "open", snoozed_until: null })
        expect(event?.previous_attributes).toEqual({ status: "snoozed", snoozed_until: thread.until })
      }
    })

    it("fails a message WhatsApp cannot deliver, with the provider's code, and gives its usage back", async () => {
      const { channel } = await makeConversation(stage.server, stage.account.ownerKey)
      const before = await used()
      // The simulator's scripted number ending 0001: accepted, then a failed status (131026).
      const id = await sendToNewLead(channel.id, "Unreachable", "+14155550001")
      const final = await waitUntil(
        () => message(id),
        (m) => m.status === "failed"
      )
      expect(final.status).toBe("failed")
      expect(final.error).toMatchObject({ code: "provider_error", provider_code: 131026 })
      expect(await used()).toBe(before)
    })

    it("never sends twice after an unknown outcome, and revives the message when WhatsApp's status proves it arrived", async () => {
      const { channel } = await makeConversation(stage.server, stage.account.ownerKey)
      // Ending 0004: the send's outcome is unknown, but "Meta" took it and plays its statuses.
      const revived = await sendToNewLead(channel.id, "Flaky Line", "+14155550004")
      const final = await waitUntil(
        () => message(revived),
        (m) => m.status === "read"
      )
      expect(final).toMatchObject({ status: "read", error: null })
      // Ending 0005: unknown, and nothing arrives: failed with outcome_unknown, for good.
      const lost = await sendToNewLead(channel.id, "Silent Line", "+14155550005")
      const failed = await waitUntil(
        () => message(lost),
        (m) => m.status === "failed"
      )
      expect(failed.error).toMatchObject({ code: "outcome_unknown", provider_code: null })
    })
  })
}

for (const [name, wiring] of Wirings.wirings) {
  describe(`a status before the send's own answer, ${name}`, () => {
    const stage = Wirings.stage(wiring, { messaging: { sender: false } })

    it("takes a status that arrives before the send's answer, by our id: message.sent once", async () => {
      // The sender is off here, so the status wins the race for certain.
      const quiet = stage.server
      {
        const { conversation, channel } = await makeConversation(quiet, stage.account.ownerKey)
        const endpoint = stage.receiver.endpoint("/race")
        const registered = await call(quiet, "POST", "/api/webhooks/endpoints", {
          auth: stage.account.ownerKey,
          json: { url: endpoint.url, events: ["message.sent"] }
        })
        endpoint.setSecret(registered.body.secret)
        const sent = await call(quiet, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
          auth: stage.account.ownerKey,
          json: TEMPLATE_SEND
        })
        // WhatsApp's "sent", carrying our id as biz_opaque_callback_data, before any send answered.
        const early = MetaPayloads.statusPayload({
          phoneNumberId: channel.phone_number_id,
          displayPhoneNumber: "15550000000",
          externalId: `wamid.EARLY${Date.now()}`,
          status: "sent",
          recipientId: "16505550000",
          callbackData: sent.body.id,
          timestamp: new Date(sent.body.created_at)
        })
        expect((await postWebhook(quiet, early)).status).toBe(200)
        const read = (await call(quiet, "GET", `/api/v1/messages/${sent.body.id}`, { auth: stage.account.ownerKey }))
          .body
        expect(read).toMatchObject({ status: "sent", external_id: expect.stringMatching(/^wamid\.EARLY/) })
        // The same status again changes nothing and emits nothing.
        expect((await postWebhook(quiet, early)).status).toBe(200)
        const requests = await endpoint.waitFor(1, 10_000)
        expect(requests.map((r) => JSON.parse(r.body).data)).toMatchObject([{ id: sent.body.id, status: "sent" }])
      }
    })

    /** A Meta status for one of our messages, by our id. */
    const status = (
      phoneNumberId: string,
      messageId: string,
      value: "sent" | "delivered" | "read" | "failed",
      at: string
    ) =>
      MetaPayloads.statusPayload({
        phoneNumberId,
        displayPhoneNumber: "15550000000",
        externalId: `wamid.OOO${messageId}`,
        status: value,
        recipientId: "16505550000",
        callbackData: messageId,
        timestamp: new Date(at),
        ...(value === "failed"
          ? { error: { code: 131026, title: "Message undeliverable", message: "Undeliverable" } }
          : {})
      })

    it("merges statuses that arrive out of order: read, then delivered, sent and failed change nothing", async () => {
      const { conversation, channel } = await makeConversation(stage.server, stage.account.ownerKey)
      const endpoint = stage.receiver.endpoint("/out-of-order")
      const registered = await call(stage.server, "POST", "/api/webhooks/endpoints", {
        auth: stage.account.ownerKey,
        json: { url: endpoint.url, events: ["message.sent", "message.status_changed"] }
      })
      endpoint.setSecret(registered.body.secret)
      const send = () =>
        call(stage.server, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
          auth: stage.account.ownerKey,
          json: TEMPLATE_SEND
        })
      const first = (await send()).body
      for (const value of ["read", "delivered", "sent", "failed"] as const) {
        expect(
          (await postWebhook(stage.server, status(channel.phone_number_id, first.id, value, first.created_at))).status
        ).toBe(200)
      }
      const read = (await call(stage.server, "GET", `/api/v1/messages/${first.id}`, { auth: stage.account.ownerKey }))
        .body
      expect(read).toMatchObject({ status: "read", error: null })
      // Meta may skip "delivered" when a message is read at once: read implies it.
      expect(read.delivered_at).not.toBeNull()
      expect(read.sent_at).not.toBeNull()
      // A second message's own event, delivered after the first's: a positive signal that nothing more is coming.
      const second = (await send()).body
      await postWebhook(stage.server, status(channel.phone_number_id, second.id, "sent", second.created_at))
      const requests = await endpoint.waitFor(2, 10_000)
      const events = requests.map((r) => JSON.parse(r.body))
      expect(events.map((e) => [e.type, e.data.id, e.data.status])).toEqual([
        ["message.sent", first.id, "read"],
        ["message.sent", second.id, "sent"]
      ])
    })

    it("records a message WhatsApp delivers three times, twice at once, once, with one message.received", async () => {
      const channel = (await makeConversation(stage.server, stage.account.ownerKey)).channel
      const endpoint = stage.receiver.endpoint("/received")
      const registered = await call(stage.server, "POST", "/api/webhooks/endpoints", {
        auth: stage.account.ownerKey,
        json: { url: endpoint.url, events: ["message.received"] }
      })
      endpoint.setSecret(registered.body.secret)
      const payload = (text: string) =>
        MetaPayloads.inboundTextPayload({
          phoneNumberId: channel.phone_number_id,
          displayPhoneNumber: "16505551111",
          from: "14155550177",
          name: "Thrice",
          text,
          externalId: `wamid.${crypto.randomUUID()}`,
          timestamp: new Date(channel.created_at as string)
        })
      const thrice = payload("only once")
      await Promise.all([postWebhook(stage.server, thrice), postWebhook(stage.server, thrice)])
      await postWebhook(stage.server, thrice)
      await postWebhook(stage.server, payload("the sentinel"))
      const requests = await endpoint.waitFor(2, 10_000)
      expect(requests.map((r) => JSON.parse(r.body).data.text).sort()).toEqual(["only once", "the sentinel"])
    })

    it("stores a batch of messages as WhatsApp posts it: new and known senders, a wamid twice in it, in order", async () => {
      const known = nextWaId()
      const { channel, conversation } = await makeConversation(
        stage.server,
        stage.account.ownerKey,
        "Hello there",
        known
      )
      const newcomer = nextWaId()
      const endpoint = stage.receiver.endpoint("/batch-in")
      const registered = await call(stage.server, "POST", "/api/webhooks/endpoints", {
        auth: stage.account.ownerKey,
        json: { url: endpoint.url, events: ["message.received", "lead.created"] }
      })
      endpoint.setSecret(registered.body.secret)
      const at = Date.parse(channel.created_at as string)
      const item = (from: string, externalId: string, text: string, second: number) => ({
        from,
        name: from === newcomer ? "Newcomer" : "Ada Customer",
        text,
        externalId,
        timestamp: new Date(at + second * 1000)
      })
      const repeated = `wamid.${crypto.randomUUID()}`
      const raw = MetaPayloads.inboundTextsPayload(channel.phone_number_id, "16505551111", [
        item(newcomer, `wamid.${crypto.randomUUID()}`, "first of the newcomer", 1),
        item(known, repeated, "from a known customer", 2),
        item(newcomer, `wamid.${crypto.randomUUID()}`, "second of the newcomer", 3),
        item(known, repeated, "from a known customer", 2)
      ])
      expect((await postWebhook(stage.server, raw)).status).toBe(200)
      const events = (await endpoint.waitFor(4, 10_000)).map((r) => JSON.parse(r.body))
      // Recorded in the batch's order: one lead for the newcomer, before the three messages.
      const recorded = [...events].sort((a, b) => (a.id < b.id ? -1 : 1))
      expect(recorded.map((e) => [e.type, e.data.text ?? e.data.name])).toEqual([
        ["lead.created", "Newcomer"],
        ["message.received", "first of the newcomer"],
        ["message.received", "from a known customer"],
        ["message.received", "second of the newcomer"]
      ])
      // Delivered in order per lead (docs/contract.md, "Webhooks"); the two leads' in parallel.
      const newcomerLead = events.find((e) => e.type === "lead.created").data.id
      expect(
        events
          .filter((e) => e.data.id === newcomerLead || e.data.lead_id === newcomerLead)
          .map((e) => e.data.text ?? e.data.name)
      ).toEqual(["Newcomer", "first of the newcomer", "second of the newcomer"])
      const threads = await call(stage.server, "GET", `/api/v1/conversations?channel_id=${channel.id}`, {
        auth: stage.account.ownerKey
      })
      expect(threads.body.conversations.map((c: { contact_wa_id: string }) => c.contact_wa_id).sort()).toEqual(
        [known, newcomer].sort()
      )
      const newThread = threads.body.conversations.find((c: { contact_wa_id: string }) => c.contact_wa_id === newcomer)
      // The window runs from the newcomer's latest message (WhatsApp's time), not the first.
      expect(newThread.last_inbound_at).toBe(new Date(Math.floor(at / 1000) * 1000 + 3000).toISOString())
      const knownThread = await call(stage.server, "GET", `/api/v1/conversations/${conversation.id}/messages`, {
        auth: stage.account.ownerKey
      })
      expect(knownThread.body.messages.map((m: { text: string }) => m.text)).toEqual([
        "from a known customer",
        "Hello there"
      ])
    })

    it("merges a batch of statuses: two for one message in order, one per other message, an unknown one skipped", async () => {
      const { conversation, channel } = await makeConversation(stage.server, stage.account.ownerKey)
      const endpoint = stage.receiver.endpoint("/batch-statuses")
      const registered = await call(stage.server, "POST", "/api/webhooks/endpoints", {
        auth: stage.account.ownerKey,
        json: { url: endpoint.url, events: ["message.sent", "message.status_changed"] }
      })
      endpoint.setSecret(registered.body.secret)
      const send = async () =>
        (
          await call(stage.server, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
            auth: stage.account.ownerKey,
            json: TEMPLATE_SEND
          })
        ).body
      const [a, b] = [await send(), await send()]
      const entry = (messageId: string, value: "sent" | "delivered" | "read") => ({
        externalId: `wamid.BATCH${messageId}`,
        status: value,
        recipientId: "16505550000",
        callbackData: messageId,
        timestamp: new Date(a.created_at)
      })
      const raw = MetaPayloads.statusesPayload(channel.phone_number_id, "15550000000", [
        entry(a.id, "sent"),
        entry(b.id, "delivered"),
        { ...entry("msg_not_ours", "read"), callbackData: null },
        entry(a.id, "read")
      ])
      expect((await postWebhook(stage.server, raw)).status).toBe(200)
      const events = (await endpoint.waitFor(3, 10_000)).map((r) => JSON.parse(r.body))
      expect(events.map((e) => [e.type, e.data.id, e.data.status])).toEqual([
        ["message.sent", a.id, "sent"],
        ["message.sent", b.id, "delivered"],
        ["message.status_changed", a.id, "read"]
      ])
      for (const [message, final] of [
        [a, "read"],
        [b, "delivered"]
      ] as const) {
        const read = (
          await call(stage.server, "GET", `/api/v1/messages/${message.id}`, { auth: stage.account.ownerKey })
        ).body
        expect(read).toMatchObject({ status: final, external_id: `wamid.BATCH${message.id}` })
      }
    })
  })
}

describe("sending through the Cloud API transport, against a mock Graph server", () => {
  let graph: MockGraph.MockGraph
  let server: TestServer.Running
  let account: AccountFixture
  let lead: string
  let channelId: string

  beforeAll(async () => {
    graph = await MockGraph.start()
    server = await TestServer.start({
      messaging: {
        transport: CloudTransport.layer({ baseUrl: graph.url, timeoutMillis: 500 }),
        senderOptions: { pollMillis: 100 }
      }
    })
    account = await makeAccount(server)
    channelId = (await createChannel(server, account.ownerKey)).id
    lead = (
      await call(server, "POST", "/api/v1/leads", {
        auth: account.ownerKey,
        json: { name: "Graph Customer", phone: "+14155550188" }
      })
    ).body.id
  })
  afterAll(async () => {
    await server?.close()
    await graph?.close()
  })

  const sendOne = async () => {
    const reply = await call(server, "POST", "/api/v1/messages", {
      auth: account.ownerKey,
      json: { ...TEMPLATE_SEND, lead_id: lead, channel_id: channelId }
    })
    expect(reply.status, reply.text).toBe(201)
    return reply.body.id as string
  }
  const settled = (id: string) =>
    waitUntil(
      async () => (await call(server, "GET", `/api/v1/messages/${id}`, { auth: account.ownerKey })).body,
      (m) => m.status !== "queued"
    )
  const postsFor = (id: string) =>
    graph.requests().filter((r) => (r.body as { biz_opaque_callback_data?: string }).biz_opaque_callback_data === id)

  it("retries a throughput refusal (130429) after backing off, then WhatsApp takes it", async () => {
    graph.script(MockGraph.Reply.graphError(400, 130429))
    const id = await sendOne()
    const final = await settled(id)
    expect(final).toMatchObject({ status: "sent", error: null })
    const posts = postsFor(id)
    expect(posts).toHaveLength(2)
    // About 2 s (2^1, ±10 %) between the refusal and the retry.
    expect(posts[1]!.receivedAt - posts[0]!.receivedAt).toBeGreaterThanOrEqual(1700)
  })

  it('retries Graph\'s 131000 ("something went wrong", HTTP 500) as Meta advises, then WhatsApp takes it', async () => {
    graph.script(MockGraph.Reply.graphError(500, 131000, { message: "Something went wrong" }))
    const id = await sendOne()
    const final = await settled(id)
    expect(final).toMatchObject({ status: "sent", error: null })
    expect(postsFor(id)).toHaveLength(2)
  })

  it("cools the channel down after a throughput refusal: the next send waits about a second", async () => {
    graph.script(MockGraph.Reply.graphError(400, 130429))
    const before = graph.requests().length
    const refused = await sendOne()
    const [first] = (await graph.waitFor(before + 1, 10_000)).slice(before)
    const next = await sendOne()
    expect((await settled(next)).status).toBe("sent")
    const [nextPost] = postsFor(next)
    expect(nextPost!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(900)
    expect((await settled(refused)).status).toBe("sent")
  })

  it("fails a permanent refusal with WhatsApp's code, after one POST", async () => {
    graph.script(MockGraph.Reply.graphError(400, 131026, { message: "Message undeliverable" }))
    const id = await sendOne()
    const final = await settled(id)
    expect(final).toMatchObject({
      status: "failed",
      error: { code: "provider_error", provider_code: 131026, message: "Message undeliverable" }
    })
    expect(postsFor(id)).toHaveLength(1)
  })

  it("records a refused token on the channel (last_error), which a new token clears", async () => {
    graph.script(MockGraph.Reply.graphError(401, 190, { message: "Error validating access token" }))
    const id = await sendOne()
    expect(await settled(id)).toMatchObject({ status: "failed", error: { code: "provider_error", provider_code: 190 } })
    const channel = await call(server, "GET", `/api/v1/channels/${channelId}`, { auth: account.ownerKey })
    expect(channel.body.last_error).toEqual({
      code: "provider_error",
      message: "Error validating access token",
      provider_code: 190
    })
    const rekeyed = await call(server, "PATCH", `/api/v1/channels/${channelId}`, {
      auth: account.ownerKey,
      json: { access_token: "EAAG-fresh" }
    })
    expect(rekeyed.body.last_error).toBeNull()
    const next = await sendOne()
    expect((await settled(next)).status).toBe("sent")
    expect(postsFor(next)[0]!.headers.authorization).toBe("Bearer EAAG-fresh")
  })

  it("fails a send that timed out as outcome_unknown and never POSTs it again", async () => {
    graph.script(MockGraph.Reply.hang())
    const id = await sendOne()
    const final = await settled(id)
    expect(final).toMatchObject({ status: "failed", error: { code: "outcome_unknown", provider_code: null } })
    // Another send goes through after it: the sender moved on, and did not come back to this one.
    const next = await sendOne()
    expect((await settled(next)).status).toBe("sent")
    expect(postsFor(id)).toHaveLength(1)
  })
})

describe("WhatsApp's sent status before the send's own answer, which then times out", () => {
  let graph: MockGraph.MockGraph
  let server: TestServer.Running
  let account: AccountFixture

  beforeAll(async () => {
    graph = await MockGraph.start()
    // Long enough that Meta's status surely lands while the send still waits for its answer.
    server = await TestServer.start({
      messaging: {
        transport: CloudTransport.layer({ baseUrl: graph.url, timeoutMillis: 2_000 }),
        senderOptions: { pollMillis: 100 }
      }
    })
    account = await makeAccount(server)
  })
  afterAll(async () => {
    await server?.close()
    await graph?.close()
  })

  it("stays sent, announced once and counted, and is not sent again", async () => {
    const channel = await createChannel(server, account.ownerKey)
    const lead = await call(server, "POST", "/api/v1/leads", {
      auth: account.ownerKey,
      json: { name: "Early Status", phone: "+14155550177" }
    })
    const used = async () =>
      (await call(server, "GET", "/api/usage", { auth: account.ownerKey })).body.usage.messages_used as number
    const send = async () => {
      const reply = await call(server, "POST", "/api/v1/messages", {
        auth: account.ownerKey,
        json: { ...TEMPLATE_SEND, lead_id: lead.body.id, channel_id: channel.id }
      })
      expect(reply.status, reply.text).toBe(201)
      return reply.body.id as string
    }
    const read = async (id: string) =>
      (await call(server, "GET", `/api/v1/messages/${id}`, { auth: account.ownerKey })).body
    graph.script(MockGraph.Reply.hang())
    const before = graph.requests().length
    const id = await send()
    await graph.waitFor(before + 1, 10_000)
    // Graph took it and WhatsApp says so, while the sender still waits for Graph's answer.
    const status = MetaPayloads.statusPayload({
      phoneNumberId: channel.phone_number_id,
      displayPhoneNumber: "15550000000",
      externalId: "wamid.EARLYSENT",
      status: "sent",
      recipientId: "14155550177",
      callbackData: id,
      timestamp: new Date()
    })
    expect((await postWebhook(server, status)).status).toBe(200)
    expect(await read(id)).toMatchObject({ status: "sent", external_id: "wamid.EARLYSENT" })
    // The next message goes out once the first send has timed out and its outcome is recorded.
    const next = await send()
    await waitUntil(
      () => read(next),
      (m) => m.status === "sent"
    )
    expect(await read(id)).toMatchObject({ status: "sent", error: null, external_id: "wamid.EARLYSENT" })
    expect(await used()).toBe(2)
    const announced = (await eventsOf(server, account.ownerKey, "?type=message.sent")).events
    expect(announced.filter((event) => event.data.id === id)).toHaveLength(1)
    const posts = graph
      .requests()
      .filter((r) => (r.body as { biz_opaque_callback_data?: string }).biz_opaque_callback_data === id)
    expect(posts).toHaveLength(1)
  })
})
