import { describe, expect, it } from "vitest"
import { createAgent } from "../src/agents/AgentsResource.ts"
import { summaryOf, timeseriesOf } from "../src/analytics/AnalyticsResource.ts"
import { makeConversation } from "../src/conversations/ConversationsResource.ts"
import { call } from "../src/Http.ts"
import { until } from "../src/internal/wire.ts"
import { createSource } from "../src/knowledge/KnowledgeResource.ts"
import { createLead } from "../src/leads/LeadsResource.ts"
import { createOrder } from "../src/orders/OrdersResource.ts"
import * as Wirings from "../src/Wirings.ts"

/**
 * Analytics on a calendar (issue 15): rows placed at known instants around Berlin's fall-back
 * (2026-10-25, 03:00 CEST → 02:00 CET) by moving the server's clock, then every number of the
 * summary and of each timeseries read back in UTC and in Europe/Berlin.
 */
for (const [name, wiring] of Wirings.wirings) {
  describe(`analytics on a calendar ${name}`, () => {
    const stage = Wirings.stage(wiring)

    it("puts each lead, message and order in its bucket, in UTC and across a daylight-saving change", async () => {
      const owner = stage.account.ownerKey
      const at = (iso: string) => stage.server.clock.set(new Date(iso))
      const points = (reply: { points: ReadonlyArray<{ value: number }> }) => reply.points.map((p) => p.value)

      at("2026-10-24T21:30:00Z") // Berlin 24th 23:30 +02; UTC 24th
      await createLead(stage.server, owner)
      at("2026-10-24T22:30:00Z") // Berlin 25th 00:30 +02 (hour 0); UTC 24th
      const buyer = await createLead(stage.server, owner)
      at("2026-10-25T00:30:00Z") // Berlin 02:30 +02, the first 02:00 hour (2); a customer writes in: a lead too
      const { conversation } = await makeConversation(stage.server, owner)
      at("2026-10-25T00:32:00Z") // answered two minutes later
      const answer = await call(stage.server, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
        auth: owner,
        json: { type: "text", text: "Hi! How can we help?" }
      })
      expect(answer.status, answer.text).toBe(201)
      at("2026-10-25T01:30:00Z") // Berlin 02:30 +01, the second 02:00 hour (3): an order, paid at once
      const order = await createOrder(stage.server, owner, {
        lead_id: buyer.id,
        currency: "BRL",
        items: [{ name: "Cake", unit_amount: 4590, quantity: 2 }]
      })
      const paid = await call(stage.server, "PATCH", `/api/v1/orders/${order.id}`, {
        auth: owner,
        json: { payment_status: "paid" }
      })
      expect(paid.status, paid.text).toBe(200)
      at("2026-10-25T22:59:00Z") // Berlin 23:59 +01, the last hour of the 25th (24)
      await createLead(stage.server, owner)
      at("2026-10-25T23:30:00Z") // Berlin 26th 00:30 +01; UTC still the 25th
      await createLead(stage.server, owner)

      const utc = "&from=2026-10-24&to=2026-10-26"
      const berlin = `${utc}&tz=Europe/Berlin`
      const series = async (metric: string, query: string) =>
        points(await timeseriesOf(stage.server, owner, `?metric=${metric}${query}`))
      expect(await series("leads_created", utc)).toEqual([2, 3, 0])
      expect(await series("leads_created", berlin)).toEqual([1, 3, 1])

      const hours = "&interval=hour&tz=Europe/Berlin&from=2026-10-25&to=2026-10-25"
      const hourly = (marks: Record<number, number>) => Array.from({ length: 25 }, (_, i) => marks[i] ?? 0)
      expect(await series("leads_created", hours)).toEqual(hourly({ 0: 1, 2: 1, 24: 1 }))
      expect(await series("messages_inbound", hours)).toEqual(hourly({ 2: 1 }))
      expect(await series("messages_outbound", hours)).toEqual(hourly({ 2: 1 }))
      expect(await series("orders_created", hours)).toEqual(hourly({ 3: 1 }))
      expect(await series("revenue", `${hours}&currency=BRL`)).toEqual(hourly({ 3: 9180 }))
      expect(await series("revenue", `${hours}&currency=EUR`)).toEqual(hourly({}))

      const summary = (query: string) => summaryOf(stage.server, owner, `?from=2026-10-25&to=2026-10-25${query}`)
      const expected = (created: number) => ({
        from: "2026-10-25",
        to: "2026-10-25",
        leads: {
          created,
          by_status: { new: created, contacted: 0, qualified: 0, won: 0, lost: 0 },
          conversion_rate: 0
        },
        messages: { inbound: 1, outbound: 1, outbound_by_agent: 0 },
        conversations: { started: 1, first_response_seconds: { count: 1, avg: 120, p50: 120, p90: 120 } },
        orders: { created: 1, cancelled: 0, revenue: [{ currency: "BRL", amount: 9180, orders: 1 }] }
      })
      expect(await summary("&tz=Europe/Berlin")).toEqual({ ...expected(3), tz: "Europe/Berlin" })
      expect(await summary("")).toEqual({ ...expected(3), tz: "UTC" })
      // The 24th in Berlin holds one lead; in UTC two, and nothing else.
      const before = await summaryOf(stage.server, owner, "?from=2026-10-24&to=2026-10-24&tz=Europe/Berlin")
      expect([before.leads.created, before.messages.inbound, before.orders.created]).toEqual([1, 0, 0])

      // On the 26th an agent answers a customer: an outbound message by an agent, answered within seconds.
      const source = await createSource(stage.server, owner, {
        kind: "text",
        title: "Cakes",
        content: "Our carrot cake costs R$ 45.90 and is baked every morning."
      })
      await createAgent(stage.server, owner, { enabled: true, knowledge_source_ids: [source.id] })
      at("2026-10-26T10:00:00Z") // Berlin 11:00 +01
      const helped = await makeConversation(stage.server, owner, "How much is the carrot cake?")
      const messages = await until(
        async () =>
          (await call(stage.server, "GET", `/api/v1/conversations/${helped.conversation.id}/messages`, { auth: owner }))
            .body.messages as ReadonlyArray<{ sender_type: string }>,
        (list) => list.some((message) => message.sender_type === "agent")
      )
      expect(messages.map((message) => message.sender_type).sort()).toEqual(["agent", "lead"])
      expect(await series("messages_outbound_by_agent", berlin)).toEqual([0, 0, 1])
      expect(await series("messages_outbound", berlin)).toEqual([0, 1, 1])
      const agentDay = await summaryOf(stage.server, owner, "?from=2026-10-26&to=2026-10-26&tz=Europe/Berlin")
      expect(agentDay.messages).toEqual({ inbound: 1, outbound: 1, outbound_by_agent: 1 })
      expect(agentDay.conversations.started).toBe(1)
      expect(agentDay.conversations.first_response_seconds.count).toBe(1)
      expect(agentDay.conversations.first_response_seconds.avg).toBeLessThan(10)
      // Both days: two answers, at 120 s and a few seconds; p90 interpolates between them as percentile_cont does.
      const both = await summaryOf(stage.server, owner, "?from=2026-10-25&to=2026-10-26&tz=Europe/Berlin")
      const fast = agentDay.conversations.first_response_seconds.avg as number
      const stats = both.conversations.first_response_seconds
      expect(stats.count).toBe(2)
      // `fast` is itself rounded, so the expected figures hold to a second.
      expect(Math.abs(stats.avg - (120 + fast) / 2)).toBeLessThanOrEqual(1)
      expect(stats.p50).toBe(stats.avg)
      expect(Math.abs(stats.p90 - (fast + (120 - fast) * 0.9))).toBeLessThanOrEqual(1)
    })
  })
}
