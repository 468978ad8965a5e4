import { assert, describe, expect, it } from "@effect/vitest"
import * as MetaSignature from "../src/meta/MetaSignature.ts"
import * as MetaWebhook from "../src/meta/MetaWebhook.ts"
import { ConfigProvider, Effect, Exit } from "effect"
import { TestClock } from "effect/testing"
import * as SimulatorTransport from "../src/simulator/SimulatorTransport.ts"
import { PHONE_NUMBER_ID, SECRET, START, withSimulator } from "./SimulatorHarness.ts"

describe("SimulatorTransport playCustomer", () => {
  it.effect("signs and submits Meta's inbound text body, from without the plus", () =>
    withSimulator(({ seen }) =>
      Effect.gen(function* () {
        const simulator = yield* SimulatorTransport.Simulator
        yield* TestClock.adjust(4_321)
        const played = yield* simulator.playCustomer({
          phoneNumberId: PHONE_NUMBER_ID,
          from: "+16315551181",
          name: "Ana Souza",
          text: "Olá / quero saber o preço 😀"
        })
        assert.strictEqual(played.receipt._tag, "Accepted")
        assert.match(played.external_id, /^wamid\.SIM[A-Za-z0-9_-]+$/)
        assert.isAtMost(played.external_id.length, MetaWebhook.MAX_EXTERNAL_ID_LENGTH)

        assert.strictEqual(seen.length, 1)
        const delivery = seen[0]!
        assert.isTrue(delivery.verified)
        assert.strictEqual(delivery.parsed._tag, "Changes")
        if (delivery.parsed._tag !== "Changes") return
        const change = delivery.parsed.changes[0]!
        assert.strictEqual(delivery.parsed.changes.length, 1)
        assert.strictEqual(change.phoneNumberId, PHONE_NUMBER_ID)
        assert.deepStrictEqual(change.statuses, [])
        assert.strictEqual(change.messages.length, 1)
        const message = change.messages[0]!
        assert.deepStrictEqual(
          {
            externalId: message.externalId,
            from: message.from,
            profileName: message.profileName,
            timestamp: message.timestamp,
            type: message.type,
            text: message.text
          },
          {
            externalId: played.external_id,
            from: "16315551181",
            profileName: "Ana Souza",
            timestamp: new Date(START + 4_000),
            type: "text",
            text: "Olá / quero saber o preço 😀"
          }
        )
      })
    )
  )

  it.effect("takes digits as Meta sends them, without a name, and gives each message its own id", () =>
    withSimulator(({ seen }) =>
      Effect.gen(function* () {
        const simulator = yield* SimulatorTransport.Simulator
        const first = yield* simulator.playCustomer({
          phoneNumberId: PHONE_NUMBER_ID,
          from: "4915112345678",
          text: "hi"
        })
        const second = yield* simulator.playCustomer({
          phoneNumberId: PHONE_NUMBER_ID,
          from: "4915112345678",
          name: null,
          text: "again"
        })
        assert.notStrictEqual(first.external_id, second.external_id)
        const messages = seen.map((delivery) => {
          assert.isTrue(delivery.verified)
          return delivery.parsed._tag === "Changes" ? delivery.parsed.changes[0]!.messages[0]! : undefined
        })
        assert.deepStrictEqual(
          messages.map((message) => [message?.externalId, message?.from, message?.profileName, message?.text]),
          [
            [first.external_id, "4915112345678", null, "hi"],
            [second.external_id, "4915112345678", null, "again"]
          ]
        )
      })
    )
  )

  it.effect("answers Unauthorized when the handler knows another secret", () =>
    withSimulator(
      ({ seen, logs }) =>
        Effect.gen(function* () {
          const simulator = yield* SimulatorTransport.Simulator
          const played = yield* simulator.playCustomer({ phoneNumberId: PHONE_NUMBER_ID, from: "+1555", text: "x" })
          assert.strictEqual(played.receipt._tag, "Unauthorized")
          assert.strictEqual(seen.length, 1)
          assert.strictEqual(logs.filter((log) => log.level === "Warn").length, 1)
        }),
      { secret: "another-secret" }
    )
  )

  it.effect("playWebhook signs any body as Meta would", () =>
    withSimulator(({ seen }) =>
      Effect.gen(function* () {
        const simulator = yield* SimulatorTransport.Simulator
        const raw = new TextEncoder().encode('{"object":"whatsapp_business_account","entry":[]}')
        const receipt = yield* simulator.playWebhook(raw)
        assert.strictEqual(receipt._tag, "Accepted")
        assert.strictEqual(seen.length, 1)
        assert.isTrue(seen[0]!.verified)
        assert.strictEqual(seen[0]!.signature, MetaSignature.sign(SECRET, raw))
      })
    )
  )
})

describe("SimulatorTransport settings", () => {
  const parse = (env: Record<string, string>) =>
    Effect.runSyncExit(SimulatorTransport.config.parse(ConfigProvider.fromEnvRecord(env)))

  it("defaults to 0,500,2000", () => {
    expect(parse({})).toEqual(Exit.succeed({ delaysMs: [0, 500, 2000] }))
    expect(parse({ WHATSAPP_SIMULATOR_DELAYS_MS: "" })).toEqual(Exit.succeed({ delaysMs: [0, 500, 2000] }))
    expect(SimulatorTransport.defaults).toEqual({ delaysMs: [0, 500, 2000] })
  })

  it("reads WHATSAPP_SIMULATOR_DELAYS_MS as sent,delivered,read", () => {
    expect(parse({ WHATSAPP_SIMULATOR_DELAYS_MS: "0,0,0" })).toEqual(Exit.succeed({ delaysMs: [0, 0, 0] }))
    expect(parse({ WHATSAPP_SIMULATOR_DELAYS_MS: " 10, 20 ,3000 " })).toEqual(
      Exit.succeed({ delaysMs: [10, 20, 3000] })
    )
  })

  it("refuses anything but three whole non-negative numbers", () => {
    for (const value of ["1,2", "1,2,3,4", "a,b,c", "-1,2,3", "1.5,2,3", "1;2;3"]) {
      expect(Exit.isFailure(parse({ WHATSAPP_SIMULATOR_DELAYS_MS: value })), value).toBe(true)
    }
  })
})
