import { describe, expect, it } from "vitest"
import { makeConversation } from "../conversations/ConversationsResource.ts"
import { makeAccount } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { forbidden } from "../internal/wire.ts"
import { createLead } from "../leads/LeadsResource.ts"
import { createOrder } from "../orders/OrdersResource.ts"
import type { ContractContext } from "../Slice.ts"
import type { Target } from "../TestServer.ts"
import { SUMMARY, summaryOf, TIMESERIES, timeseriesOf } from "./AnalyticsResource.ts"

const DAY_MS = 86_400_000
const dateOf = (day: string, shift: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + shift * DAY_MS).toISOString().slice(0, 10)

/** What the server takes for today in UTC: its default `to`. */
const todayOf = async (target: Target, key: string) => (await summaryOf(target, key, "")).to as string

const invalid = (path: string, message: string) => ({
  error: `Invalid request query: ${path}: ${message}`,
  code: "validation_error",
  details: [{ path, message }]
})

/** Analytics (docs/contract-commerce-ai.md §7): the summary and the timeseries count what the account made. */
export const contract = (context: ContractContext) => {
  describe("analytics", () => {
    it("counts in the summary exactly what a fresh account made, and nothing of another account's", async () => {
      const account = await makeAccount(context.target, { keys: { analytics: ["analytics:read"] } })
      const owner = account.ownerKey
      const today = await todayOf(context.target, owner)
      const [won, lost] = [await createLead(context.target, owner), await createLead(context.target, owner)]
      await createLead(context.target, owner)
      for (const [lead, status] of [
        [won, "won"],
        [lost, "lost"]
      ] as const) {
        const patched = await call(context.target, "PATCH", `/api/v1/leads/${lead.id}`, {
          auth: owner,
          json: { status }
        })
        expect(patched.status, patched.text).toBe(200)
      }
      // A customer writes in (a fourth lead, a conversation, an inbound message); a person answers.
      const { conversation } = await makeConversation(context.target, owner)
      const answer = await call(context.target, "POST", `/api/v1/conversations/${conversation.id}/messages`, {
        auth: owner,
        json: { type: "text", text: "Hello Ada, how can we help?" }
      })
      expect(answer.status, answer.text).toBe(201)
      const order = (currency: string, unit_amount: number) =>
        createOrder(context.target, owner, {
          lead_id: won.id,
          currency,
          items: [{ name: "Box", unit_amount, quantity: 2 }]
        })
      const move = async (id: string, json: Record<string, string>) => {
        const reply = await call(context.target, "PATCH", `/api/v1/orders/${id}`, { auth: owner, json })
        expect(reply.status, reply.text).toBe(200)
      }
      const [paidBrl, cancelled, paidEur, unpaid] = [
        await order("BRL", 1250),
        await order("BRL", 999),
        await order("EUR", 700),
        await order("EUR", 100)
      ]
      await move(paidBrl.id, { payment_status: "paid" })
      await move(paidEur.id, { payment_status: "paid" })
      await move(cancelled.id, { status: "cancelled" })
      expect(unpaid.payment_status).toBe("unpaid")

      const query = `?from=${dateOf(today, -1)}&to=${dateOf(today, 1)}`
      const summary = await summaryOf(context.target, account.keys.analytics!.apiKey, query)
      const response = summary.conversations.first_response_seconds
      expect(summary).toEqual({
        from: dateOf(today, -1),
        to: dateOf(today, 1),
        tz: "UTC",
        leads: {
          created: 4,
          by_status: { new: 2, contacted: 0, qualified: 0, won: 1, lost: 1 },
          conversion_rate: 0.25
        },
        messages: { inbound: 1, outbound: 1, outbound_by_agent: 0 },
        conversations: {
          started: 1,
          first_response_seconds: { count: 1, avg: response.avg, p50: response.avg, p90: response.avg }
        },
        orders: {
          created: 4,
          cancelled: 1,
          revenue: [
            { currency: "BRL", amount: 2500, orders: 1 },
            { currency: "EUR", amount: 1400, orders: 1 }
          ]
        }
      })
      // One answer: its wait, in whole seconds, is each of the statistics.
      expect(response.avg).toBeGreaterThanOrEqual(0)
      expect(response.avg).toBeLessThan(60)

      // A lead deleted is no longer counted, nor its conversation's messages.
      const removed = await call(context.target, "DELETE", `/api/v1/leads/${lost.id}`, { auth: owner })
      expect(removed.status, removed.text).toBe(200)
      const after = await summaryOf(context.target, owner, query)
      expect(after.leads).toEqual({
        created: 3,
        by_status: { new: 2, contacted: 0, qualified: 0, won: 1, lost: 0 },
        conversion_rate: 0.3333
      })
      expect(after.messages).toEqual(summary.messages)

      const empty = await makeAccount(context.target)
      const nothing = await summaryOf(context.target, empty.ownerKey, query)
      expect(nothing.leads).toEqual({
        created: 0,
        by_status: { new: 0, contacted: 0, qualified: 0, won: 0, lost: 0 },
        conversion_rate: 0
      })
      expect(nothing.conversations.first_response_seconds).toEqual({ count: 0, avg: null, p50: null, p90: null })
      expect(nothing.orders).toEqual({ created: 0, cancelled: 0, revenue: [] })

      // The same data, a bucket a day: zero-filled around today.
      const series = async (metric: string, extra = "") =>
        (
          await timeseriesOf(
            context.target,
            owner,
            `?metric=${metric}${extra}&from=${dateOf(today, -2)}&to=${dateOf(today, 1)}`
          )
        ).points
      const days = [-2, -1, 0, 1].map((shift) => `${dateOf(today, shift)}T00:00:00+00:00`)
      const expectSeries = async (metric: string, values: ReadonlyArray<number>, extra = "") =>
        expect(await series(metric, extra), metric).toEqual(days.map((start, i) => ({ start, value: values[i] })))
      await expectSeries("leads_created", [0, 0, 3, 0])
      await expectSeries("messages_inbound", [0, 0, 1, 0])
      await expectSeries("messages_outbound", [0, 0, 1, 0])
      await expectSeries("messages_outbound_by_agent", [0, 0, 0, 0])
      await expectSeries("orders_created", [0, 0, 4, 0])
      await expectSeries("revenue", [0, 0, 2500, 0], "&currency=brl")
      const revenue = await timeseriesOf(context.target, owner, `?metric=revenue&currency=eur&interval=month`)
      expect(revenue).toMatchObject({ metric: "revenue", interval: "month", tz: "UTC", currency: "EUR" })
      expect(revenue.points.at(-1).value).toBe(1400)
    })

    it("labels buckets with their local start across Berlin's October change, and weeks from Monday", async () => {
      const key = context.acme.ownerKey
      const berlin = "&tz=Europe/Berlin&from=2026-10-24&to=2026-10-26"
      const days = await timeseriesOf(context.target, key, `?metric=leads_created${berlin}`)
      expect(days).toEqual({
        metric: "leads_created",
        interval: "day",
        from: "2026-10-24",
        to: "2026-10-26",
        tz: "Europe/Berlin",
        currency: null,
        points: [
          { start: "2026-10-24T00:00:00+02:00", value: 0 },
          { start: "2026-10-25T00:00:00+02:00", value: 0 },
          { start: "2026-10-26T00:00:00+01:00", value: 0 }
        ]
      })
      const hours = await timeseriesOf(
        context.target,
        key,
        "?metric=messages_inbound&interval=hour&tz=Europe/Berlin&from=2026-10-25&to=2026-10-25"
      )
      const starts = hours.points.map((point: { start: string }) => point.start)
      expect(starts).toHaveLength(25)
      expect(starts.slice(0, 5)).toEqual([
        "2026-10-25T00:00:00+02:00",
        "2026-10-25T01:00:00+02:00",
        "2026-10-25T02:00:00+02:00",
        "2026-10-25T02:00:00+01:00",
        "2026-10-25T03:00:00+01:00"
      ])
      expect(starts.at(-1)).toBe("2026-10-25T23:00:00+01:00")
      const spring = await timeseriesOf(
        context.target,
        key,
        "?metric=messages_inbound&interval=hour&tz=Europe/Berlin&from=2026-03-29&to=2026-03-29"
      )
      expect(spring.points).toHaveLength(23)
      expect(spring.points[2].start).toBe("2026-03-29T03:00:00+02:00")
      const kolkata = await timeseriesOf(
        context.target,
        key,
        "?metric=messages_inbound&interval=hour&tz=Asia/Kolkata&from=2026-11-02&to=2026-11-02"
      )
      expect(kolkata.points[0].start).toBe("2026-11-02T00:00:00+05:30")
      // The zone comes back as the caller named it, not as ICU's legacy alias (Asia/Calcutta).
      expect(kolkata.tz).toBe("Asia/Kolkata")
      const kathmandu = await timeseriesOf(
        context.target,
        key,
        "?metric=messages_inbound&interval=day&tz=Asia/Kathmandu&from=2026-11-02&to=2026-11-02"
      )
      expect(kathmandu.tz).toBe("Asia/Kathmandu")
      expect(kathmandu.points[0].start).toBe("2026-11-02T00:00:00+05:45")
      const summary = await call(context.target, "GET", "/api/v1/analytics/summary?tz=Asia/Kathmandu", { auth: key })
      expect(summary.status).toBe(200)
      expect(summary.body.tz).toBe("Asia/Kathmandu")
      const weeks = await timeseriesOf(
        context.target,
        key,
        "?metric=orders_created&interval=week&tz=America/Sao_Paulo&from=2026-11-04&to=2026-11-17"
      )
      expect(weeks.points.map((point: { start: string }) => point.start)).toEqual([
        "2026-11-02T00:00:00-03:00",
        "2026-11-09T00:00:00-03:00",
        "2026-11-16T00:00:00-03:00"
      ])
      const months = await timeseriesOf(
        context.target,
        key,
        "?metric=orders_created&interval=month&tz=UTC&from=2026-01-15&to=2026-03-01"
      )
      expect(months.points.map((point: { start: string }) => point.start)).toEqual([
        "2026-01-01T00:00:00+00:00",
        "2026-02-01T00:00:00+00:00",
        "2026-03-01T00:00:00+00:00"
      ])
    })

    it("refuses an unknown zone, a reversed or too long range, a bad date, metric or currency with a 400", async () => {
      const key = context.acme.ownerKey
      const cases: ReadonlyArray<readonly [string, string, ReturnType<typeof invalid>]> = [
        [SUMMARY, "?tz=Mars/Olympus", invalid("tz", "must be an IANA time zone name, such as Europe/Berlin or UTC")],
        [SUMMARY, "?tz=%2B03:00", invalid("tz", "must be an IANA time zone name, such as Europe/Berlin or UTC")],
        [SUMMARY, "?from=2026-11-10&to=2026-11-09", invalid("to", "must not be before from")],
        [SUMMARY, "?from=2026-02-30", invalid("from", "must be a date as YYYY-MM-DD")],
        [SUMMARY, "?to=26-11-01", invalid("to", "must be a date as YYYY-MM-DD")],
        [
          SUMMARY,
          "?from=2020-01-01&to=2026-01-01",
          invalid("to", "the range spans 2193 dates; at most 1827 for a summary")
        ],
        [
          TIMESERIES,
          "?metric=leads_created&interval=hour&from=2026-10-01&to=2026-11-01",
          invalid("to", "the range spans 32 dates; at most 31 with interval hour")
        ],
        [
          TIMESERIES,
          "?metric=leads_created&from=2025-01-01&to=2026-01-02",
          invalid("to", "the range spans 367 dates; at most 366 with interval day")
        ],
        [TIMESERIES, "?metric=revenue", invalid("currency", "is required by the revenue metric")],
        [
          TIMESERIES,
          "?metric=leads_created&currency=EUR",
          invalid("currency", "is only taken by money metrics, not leads_created")
        ]
      ]
      for (const [path, query, body] of cases) {
        const reply = await call(context.target, "GET", `${path}${query}`, { auth: key })
        expect([query, reply.status, reply.body]).toEqual([query, 400, body])
      }
      for (const query of [
        "?metric=leads",
        "?metric=leads_created&interval=year",
        "?metric=revenue&currency=XYZ",
        ""
      ]) {
        const reply = await call(context.target, "GET", `${TIMESERIES}${query}`, { auth: key })
        expect([query, reply.status, reply.body.code]).toEqual([query, 400, "validation_error"])
      }
      // Within the limits: 31 hours' dates, five years of weeks.
      for (const query of [
        "?metric=leads_created&interval=hour&from=2026-10-01&to=2026-10-31",
        "?metric=leads_created&interval=week&from=2021-11-01&to=2026-11-01"
      ]) {
        const reply = await call(context.target, "GET", `${TIMESERIES}${query}`, { auth: key })
        expect([query, reply.status]).toEqual([query, 200])
      }
    })

    it("needs analytics:read, with the exact 403", async () => {
      const account = await makeAccount(context.target, { keys: { leads: ["leads:read"] } })
      for (const path of [SUMMARY, `${TIMESERIES}?metric=leads_created`]) {
        const reply = await call(context.target, "GET", path, { auth: account.keys.leads!.apiKey })
        expect(reply.status).toBe(403)
        expect(reply.text).toBe(JSON.stringify(forbidden("analytics:read")))
      }
    })
  })
}
