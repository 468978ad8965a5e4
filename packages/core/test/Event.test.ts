import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { CurrentPrincipal } from "../src/auth/Principal.ts"
import * as Event from "../src/EventCatalog.ts"
import * as CampaignEvents from "../src/campaigns/CampaignEvents.ts"
import * as AgentEvents from "../src/agents/AgentEvents.ts"
import * as LeadEvents from "../src/leads/LeadEvents.ts"
import * as OrderEvents from "../src/orders/OrderEvents.ts"
import * as Slices from "../src/Slices.ts"
import * as PlatformEvents from "../src/events/PlatformEvents.ts"
import { emit, Outbox } from "../src/events/Outbox.ts"
import type { Lead } from "../src/leads/Lead.ts"

const lead: Lead = {
  id: "ld_01jz0000000000000000000000",
  name: "Ada",
  phone: "+14155550100",
  email: null,
  tags: ["vip"],
  status: "new",
  assigned_user_id: null,
  attributes: { source: "web" },
  marketing_opt_out: null,
  created_at: "2025-01-01T00:00:00.000Z",
  updated_at: "2025-01-01T00:00:00.000Z"
}

const envelope = (type: string, data: unknown) => ({
  id: "evt_1",
  type,
  created_at: "2025-01-01T00:00:00.000Z",
  account_id: "2b1f5c1e-1111-4222-8333-444455556666",
  data
})

const decodes = (schema: Schema.Decoder<unknown>, input: unknown) =>
  Schema.decodeUnknownExit(schema)(input)._tag === "Success"

describe("event data schemas", () => {
  it("name a data schema for each of the ten types", () => {
    assert.deepStrictEqual(Object.keys(Event.Data).sort(), [...Event.EVENT_TYPES].sort())
    assert.deepStrictEqual(Object.keys(Event.Envelopes).sort(), [...Event.EVENT_TYPES].sort())
    assert.strictEqual(Event.Data["lead.created"], Event.Data["lead.deleted"])
  })

  it("decode a lead event with the lead as data, and refuse anything else as its data", () => {
    const body = envelope("lead.created", lead)
    assert.deepStrictEqual(Schema.decodeUnknownSync(Event.Envelopes["lead.created"])(body), body)
    assert.deepStrictEqual(Schema.decodeUnknownSync(Event.Envelope)(body), body)
    assert.isFalse(decodes(Event.Envelopes["lead.created"], envelope("lead.created", { id: lead.id })))
    assert.isFalse(decodes(Event.Envelope, envelope("lead.deleted", { id: lead.id, name: "Ada" })))
    // The type is part of each envelope schema: a lead.deleted body is not a lead.created one.
    assert.isFalse(decodes(Event.Envelopes["lead.created"], envelope("lead.deleted", lead)))
    assert.isFalse(decodes(Event.Envelope, envelope("lead.exploded", lead)))
  })

  it("want the whole object of their resource", () => {
    assert.isFalse(decodes(Event.Envelopes["campaign.queued"], envelope("campaign.queued", { id: "cmp_1" })))
    assert.isFalse(decodes(Event.Envelope, envelope("order.created", { id: "ord_1", status: "pending" })))
    for (const type of ["agent.config_changed", "knowledge.updated"] as const) {
      assert.isFalse(decodes(Event.Envelopes[type], envelope(type, { id: "x_1", extra: true })), type)
    }
  })
})

describe("emit", () => {
  it.effect("appends the envelope it returns, for the caller's account, and it decodes for its type", () =>
    Effect.gen(function* () {
      const appended: Array<unknown> = []
      const event = yield* emit(LeadEvents.created, lead).pipe(
        Effect.provide(
          Layer.mergeAll(
            Layer.succeed(Outbox)({ append: (events) => Effect.sync(() => void appended.push(...events)) }),
            Layer.succeed(CurrentPrincipal)({
              accountId: "2b1f5c1e-1111-4222-8333-444455556666",
              userId: "u",
              ownerUserId: "u",
              role: "owner",
              keyId: "k",
              scopes: []
            })
          )
        )
      )
      assert.deepStrictEqual(appended, [event])
      assert.strictEqual(event.type, "lead.created")
      assert.strictEqual(event.account_id, "2b1f5c1e-1111-4222-8333-444455556666")
      assert.match(event.id, /^evt_[0-9a-z]{26}$/)
      assert.deepStrictEqual(Schema.decodeUnknownSync(Event.Envelopes["lead.created"])(event), event)
    })
  )

  it.effect("puts the old values of a change beside data as previous_attributes, and the envelope decodes", () =>
    Effect.gen(function* () {
      const appended: Array<unknown> = []
      const event = yield* emit(LeadEvents.created, lead, { status: "contacted" }).pipe(
        Effect.provide(
          Layer.mergeAll(
            Layer.succeed(Outbox)({ append: (events) => Effect.sync(() => void appended.push(...events)) }),
            Layer.succeed(CurrentPrincipal)({
              accountId: "2b1f5c1e-1111-4222-8333-444455556666",
              userId: "u",
              ownerUserId: "u",
              role: "owner",
              keyId: "k",
              scopes: []
            })
          )
        )
      )
      assert.deepStrictEqual(event.previous_attributes, { status: "contacted" })
      assert.deepStrictEqual(appended, [event])
      assert.deepStrictEqual(Schema.decodeUnknownSync(Event.Envelopes["lead.created"])(event), event)
      // Without one, the envelope has no such key at all (not `undefined` on the wire).
      const plain = yield* emit(LeadEvents.created, lead).pipe(
        Effect.provide(
          Layer.mergeAll(
            Layer.succeed(Outbox)({ append: () => Effect.void }),
            Layer.succeed(CurrentPrincipal)({
              accountId: "a",
              userId: "u",
              ownerUserId: "u",
              role: "owner",
              keyId: "k",
              scopes: []
            })
          )
        )
      )
      assert.isFalse("previous_attributes" in plain)
    })
  )

  it("is typed by the event definition: checked by tsc, never run", () => {
    const typeChecks = () => [
      // @ts-expect-error lead.created carries a Lead
      emit(LeadEvents.created, { id: lead.id }),
      // @ts-expect-error lead.deleted carries a Lead
      emit(LeadEvents.deleted, { id: "ord_1", status: "paid" }),
      // @ts-expect-error order.created carries a whole Order
      emit(OrderEvents.created, { id: "ord_1", status: "pending" }),
      emit(LeadEvents.created, lead),
      // @ts-expect-error agent.config_changed carries a whole Agent
      emit(AgentEvents.configChanged, { id: "agt_1", enabled: true }),
      // @ts-expect-error campaign.queued carries a whole Campaign
      emit(CampaignEvents.queued, { id: "cmp_1" })
    ]
    assert.isFunction(typeChecks)
  })
})

describe("the event catalog", () => {
  it("holds every event type of every slice and of the platform, each once: the nine of the seed and message.status_changed", () => {
    assert.deepStrictEqual(
      [...Event.EVENT_TYPES].sort(),
      [
        ...Slices.all.flatMap((slice) => slice.events.map((definition) => definition.type)),
        ...PlatformEvents.events.map((definition) => definition.type)
      ].sort()
    )
    assert.include(Event.EVENT_TYPES, "webhook_endpoint.disabled")
    for (const type of [
      "agent.config_changed",
      "campaign.queued",
      "knowledge.updated",
      "lead.created",
      "lead.deleted",
      "message.received",
      "message.sent",
      "message.status_changed",
      "order.created",
      "order.status_changed"
    ]) {
      assert.include(Event.EVENT_TYPES, type)
    }
    assert.strictEqual(new Set(Event.EVENT_TYPES).size, Event.EVENT_TYPES.length)
    assert.strictEqual(Event.Envelopes["lead.created"], LeadEvents.created.envelope)
  })
})
