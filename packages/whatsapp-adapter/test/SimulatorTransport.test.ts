import { assert, describe, expect, it } from "@effect/vitest"
import {
  type Accepted,
  MessageTransport,
  type OutboundBody,
  type OutboundRequest,
  type SendFailure
} from "@leadline/core/messages/MessageTransport"
import { Inbound, MetaApp, type Receipt } from "@leadline/core/whatsapp/Inbound"
import * as MetaSignature from "@leadline/core/whatsapp/MetaSignature"
import * as MetaWebhook from "@leadline/core/whatsapp/MetaWebhook"
import { ConfigProvider, Effect, Exit, Layer, Logger, Option, Queue, Redacted } from "effect"
import { TestClock } from "effect/testing"
import * as SimulatorTransport from "../src/simulator/SimulatorTransport.ts"

const SECRET = "simulator-test-secret"
const app = { appSecret: Redacted.make(SECRET), verifyToken: Redacted.make("verify") }
const PHONE_NUMBER_ID = "106540352242922"
/** 2025-01-01T00:00:00Z: status timestamps are whole seconds of the clock. */
const START = Date.UTC(2025, 0, 1)

interface Delivery {
  readonly signature: string | undefined
  readonly verified: boolean
  readonly parsed: MetaWebhook.Parsed
}

interface Harness {
  readonly queue: Queue.Queue<Delivery>
  readonly seen: Array<Delivery>
  readonly logs: Array<{ readonly level: string; readonly message: string }>
}

type Answer = (delivery: Delivery, call: number) => Effect.Effect<Receipt>

/** Like core's `Inbound`: verifies the signature with `MetaApp`'s secret, then parses the same bytes. */
const honest: Answer = (delivery) =>
  Effect.succeed(
    delivery.verified
      ? ({ _tag: "Accepted", stored: 0, duplicates: 0, skipped: 0 } as const)
      : ({ _tag: "Unauthorized" } as const)
  )

const withSimulator = <A, E>(
  f: (harness: Harness) => Effect.Effect<A, E, MessageTransport | SimulatorTransport.Simulator>,
  options: {
    readonly delaysMs?: readonly [number, number, number]
    readonly secret?: string
    readonly answer?: Answer
  } = {}
) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(START)
    const queue = yield* Queue.unbounded<Delivery>()
    const seen: Array<Delivery> = []
    const logs: Array<{ level: string; message: string }> = []
    const answer = options.answer ?? honest
    const verifyWith = options.secret ?? SECRET
    const inbound = Layer.succeed(
      Inbound,
      Inbound.of({
        handshake: () => Effect.succeed(undefined),
        receive: (raw, signature) =>
          Effect.gen(function* () {
            const delivery: Delivery = {
              signature,
              verified: MetaSignature.verify(verifyWith, raw, signature),
              parsed: MetaWebhook.parse(raw)
            }
            seen.push(delivery)
            yield* Queue.offer(queue, delivery)
            return yield* answer(delivery, seen.length)
          })
      })
    )
    const logger = Logger.layer([
      Logger.make((entry) => {
        const message = entry.message
        logs.push({
          level: entry.logLevel,
          message: (Array.isArray(message) ? message : [message]).map(String).join(" ")
        })
      })
    ])
    return yield* f({ queue, seen, logs }).pipe(
      Effect.provide(
        SimulatorTransport.layer(options.delaysMs === undefined ? {} : { delaysMs: options.delaysMs }).pipe(
          Layer.provide(inbound)
        )
      ),
      Effect.provide(logger),
      Effect.provideService(MetaApp, app)
    )
  })

const request = (
  to: string,
  callbackData: string,
  body: OutboundBody = { type: "text", text: "Hello" }
): OutboundRequest => ({
  channel: { phoneNumberId: PHONE_NUMBER_ID, accessToken: Redacted.make("token") },
  to,
  body,
  callbackData
})

const send = (req: OutboundRequest) => MessageTransport.use((transport) => transport.send(req))

/** The one status a simulated webhook carries, after checking its envelope. */
const statusOf = (delivery: Delivery): MetaWebhook.StatusUpdate => {
  assert.isTrue(delivery.verified, "signed with MetaApp's secret")
  assert.strictEqual(delivery.parsed._tag, "Changes")
  if (delivery.parsed._tag !== "Changes") throw new Error("unreachable")
  assert.deepStrictEqual(delivery.parsed.skipped, [])
  assert.strictEqual(delivery.parsed.changes.length, 1)
  const change = delivery.parsed.changes[0]!
  assert.strictEqual(change.phoneNumberId, PHONE_NUMBER_ID)
  assert.strictEqual(change.displayPhoneNumber, SimulatorTransport.DISPLAY_PHONE_NUMBER)
  assert.deepStrictEqual(change.messages, [])
  assert.strictEqual(change.statuses.length, 1)
  return change.statuses[0]!
}

const wamid = (messageId: string) => `wamid.SIM${Buffer.from(messageId, "utf8").toString("base64url")}`

const expectStatus = (
  delivery: Delivery,
  expected: { status: MetaWebhook.DeliveryStatus; messageId: string; to: string; at: number }
) => {
  const status = statusOf(delivery)
  assert.deepStrictEqual(status, {
    externalId: wamid(expected.messageId),
    status: expected.status,
    timestamp: new Date(Math.floor(expected.at / 1000) * 1000),
    recipientId: expected.to,
    callbackData: expected.messageId,
    error:
      expected.status === "failed"
        ? { code: "provider_error", message: "Message undeliverable", provider_code: 131026 }
        : null
  })
}

/** A refusal's fields (an Error's `message` is not enumerable, so a spread would drop it). */
const fieldsOf = (error: SendFailure) =>
  error._tag === "Rejected"
    ? {
        retryable: error.retryable,
        retryAfterMs: error.retryAfterMs,
        providerCode: error.providerCode,
        message: error.message,
        channelError: error.channelError
      }
    : { reason: error.reason }

const drain = (queue: Queue.Queue<Delivery>) => Queue.poll(queue)

describe("SimulatorTransport send", () => {
  it.effect("accepts with wamid.SIM + base64url(our id), then plays sent, delivered, read after the delays", () =>
    withSimulator(({ queue, seen }) =>
      Effect.gen(function* () {
        const to = "16315551181"
        const accepted = yield* send(request(to, "msg_01jb3k9q8w7e6r5t4y3u2i1o0p"))
        assert.deepStrictEqual(accepted, {
          externalId: "wamid.SIMbXNnXzAxamIzazlxOHc3ZTZyNXQ0eTN1MmkxbzBw",
          waId: to
        } satisfies Accepted)
        assert.strictEqual(accepted.externalId, wamid("msg_01jb3k9q8w7e6r5t4y3u2i1o0p"))

        // `sent` has no delay: it arrives without moving the clock.
        expectStatus(yield* Queue.take(queue), {
          status: "sent",
          messageId: "msg_01jb3k9q8w7e6r5t4y3u2i1o0p",
          to,
          at: START
        })

        yield* TestClock.adjust(499)
        assert.strictEqual(seen.length, 1, "delivered waits 500 ms")
        yield* TestClock.adjust(1)
        expectStatus(Option.getOrThrow(yield* drain(queue)), {
          status: "delivered",
          messageId: "msg_01jb3k9q8w7e6r5t4y3u2i1o0p",
          to,
          at: START + 500
        })

        yield* TestClock.adjust(1999)
        assert.strictEqual(seen.length, 2, "read waits 2000 ms after delivered")
        yield* TestClock.adjust(1)
        expectStatus(Option.getOrThrow(yield* drain(queue)), {
          status: "read",
          messageId: "msg_01jb3k9q8w7e6r5t4y3u2i1o0p",
          to,
          at: START + 2500
        })

        yield* TestClock.adjust(60_000)
        assert.strictEqual(seen.length, 3, "nothing after read")
        assert.isTrue(seen.every((delivery) => delivery.signature?.startsWith("sha256=")))
      })
    )
  )

  it.effect("returns before any status is played", () =>
    withSimulator(
      ({ queue, seen }) =>
        Effect.gen(function* () {
          const accepted = yield* send(request("4915112345678", "msg_a"))
          assert.strictEqual(accepted.externalId, wamid("msg_a"))
          assert.strictEqual(seen.length, 0)
          yield* TestClock.adjust(999)
          assert.strictEqual(seen.length, 0)
          yield* TestClock.adjust(1)
          expectStatus(Option.getOrThrow(yield* drain(queue)), {
            status: "sent",
            messageId: "msg_a",
            to: "4915112345678",
            at: START + 1000
          })
          yield* TestClock.adjust(2000)
          assert.deepStrictEqual(
            seen.map((delivery) => statusOf(delivery).status),
            ["sent", "delivered", "read"]
          )
        }),
      { delaysMs: [1000, 1000, 1000] }
    )
  )

  it.effect("keeps each message's statuses apart when sends overlap", () =>
    withSimulator(({ seen }) =>
      Effect.gen(function* () {
        yield* send(request("16315551181", "msg_1"))
        yield* TestClock.adjust(250)
        yield* send(request("16315551182", "msg_2"))
        yield* TestClock.adjust(10_000)
        const statuses = seen.map(statusOf).map((status) => [status.callbackData, status.status, status.recipientId])
        assert.deepStrictEqual(
          statuses.filter(([id]) => id === "msg_1"),
          [
            ["msg_1", "sent", "16315551181"],
            ["msg_1", "delivered", "16315551181"],
            ["msg_1", "read", "16315551181"]
          ]
        )
        assert.deepStrictEqual(
          statuses.filter(([id]) => id === "msg_2"),
          [
            ["msg_2", "sent", "16315551182"],
            ["msg_2", "delivered", "16315551182"],
            ["msg_2", "read", "16315551182"]
          ]
        )
      })
    )
  )
})

describe("SimulatorTransport scripted recipients", () => {
  it.effect("…0001: accepted, then a failed status 131026 (undeliverable), nothing else", () =>
    withSimulator(({ queue, seen }) =>
      Effect.gen(function* () {
        const accepted = yield* send(request("15550100001", "msg_fail"))
        assert.deepStrictEqual(accepted, { externalId: wamid("msg_fail"), waId: "15550100001" })
        expectStatus(yield* Queue.take(queue), {
          status: "failed",
          messageId: "msg_fail",
          to: "15550100001",
          at: START
        })
        yield* TestClock.adjust(60_000)
        assert.strictEqual(seen.length, 1)
      })
    )
  )

  it.effect("…0002: accepted, sent only", () =>
    withSimulator(({ queue, seen }) =>
      Effect.gen(function* () {
        const accepted = yield* send(request("15550100002", "msg_sent"))
        assert.deepStrictEqual(accepted, { externalId: wamid("msg_sent"), waId: "15550100002" })
        expectStatus(yield* Queue.take(queue), { status: "sent", messageId: "msg_sent", to: "15550100002", at: START })
        yield* TestClock.adjust(60_000)
        assert.strictEqual(seen.length, 1)
      })
    )
  )

  it.effect("…0003: the first attempt is rate limited (retryable), the next one goes through", () =>
    withSimulator(({ queue, seen }) =>
      Effect.gen(function* () {
        const first = yield* Effect.exit(send(request("15550100003", "msg_retry")))
        assert.isTrue(Exit.isFailure(first))
        const error = yield* Effect.flip(send(request("15550100003", "msg_other")))
        assert.strictEqual(error._tag, "Rejected")
        assert.deepStrictEqual(fieldsOf(error), {
          retryable: true,
          retryAfterMs: null,
          providerCode: 130429,
          message: "Rate limit hit",
          channelError: false
        })
        yield* TestClock.adjust(60_000)
        assert.strictEqual(seen.length, 0, "a refused send plays nothing")

        const accepted = yield* send(request("15550100003", "msg_retry"))
        assert.deepStrictEqual(accepted, { externalId: wamid("msg_retry"), waId: "15550100003" })
        expectStatus(yield* Queue.take(queue), {
          status: "sent",
          messageId: "msg_retry",
          to: "15550100003",
          at: START + 60_000
        })
        yield* TestClock.adjust(2500)
        assert.deepStrictEqual(
          seen.map((delivery) => statusOf(delivery).status),
          ["sent", "delivered", "read"]
        )
        const simulator = yield* SimulatorTransport.Simulator
        assert.strictEqual(yield* simulator.countFor("msg_retry"), 2)
        assert.strictEqual(yield* simulator.countFor("msg_other"), 1)
      })
    )
  )

  it.effect("…0004: OutcomeUnknown, yet sent, delivered and read arrive with our id", () =>
    withSimulator(({ queue, seen }) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(send(request("15550100004", "msg_unknown")))
        assert.strictEqual(error._tag, "OutcomeUnknown")
        expectStatus(yield* Queue.take(queue), {
          status: "sent",
          messageId: "msg_unknown",
          to: "15550100004",
          at: START
        })
        yield* TestClock.adjust(2500)
        assert.deepStrictEqual(
          seen.map(statusOf).map((status) => [status.status, status.callbackData, status.externalId]),
          [
            ["sent", "msg_unknown", wamid("msg_unknown")],
            ["delivered", "msg_unknown", wamid("msg_unknown")],
            ["read", "msg_unknown", wamid("msg_unknown")]
          ]
        )
      })
    )
  )

  it.effect("…0005: OutcomeUnknown and nothing arrives", () =>
    withSimulator(({ seen }) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(send(request("15550100005", "msg_lost")))
        assert.strictEqual(error._tag, "OutcomeUnknown")
        yield* TestClock.adjust(60_000)
        assert.strictEqual(seen.length, 0)
        const simulator = yield* SimulatorTransport.Simulator
        assert.strictEqual(yield* simulator.countFor("msg_lost"), 1)
      })
    )
  )

  it.effect(
    "a template named missing_* is refused at once with 132001, not retryable; other templates go through",
    () =>
      withSimulator(({ queue, seen }) =>
        Effect.gen(function* () {
          const missing = { type: "template", name: "missing_promo", language: "en_US", components: [] } as const
          const error = yield* Effect.flip(send(request("16315551181", "msg_tpl", missing)))
          assert.strictEqual(error._tag, "Rejected")
          assert.deepStrictEqual(fieldsOf(error), {
            retryable: false,
            retryAfterMs: null,
            providerCode: 132001,
            message: "Template name does not exist in the translation",
            channelError: false
          })
          yield* TestClock.adjust(60_000)
          assert.strictEqual(seen.length, 0)

          const hello = { type: "template", name: "hello_world", language: "en_US", components: [] } as const
          const accepted = yield* send(request("16315551181", "msg_tpl_ok", hello))
          assert.strictEqual(accepted.externalId, wamid("msg_tpl_ok"))
          expectStatus(yield* Queue.take(queue), {
            status: "sent",
            messageId: "msg_tpl_ok",
            to: "16315551181",
            at: START + 60_000
          })
        })
      )
  )
})

describe("SimulatorTransport log", () => {
  it.effect("records every attempt, refused ones included, with its clock time", () =>
    withSimulator(() =>
      Effect.gen(function* () {
        const simulator = yield* SimulatorTransport.Simulator
        assert.deepStrictEqual(yield* simulator.sends, [])
        const text = { type: "text", text: "Hi" } as const
        const template = {
          type: "template",
          name: "missing_x",
          language: "pt_BR",
          components: [{ type: "body" }]
        } as const
        yield* send(request("16315551181", "msg_a", text))
        yield* TestClock.adjust(10)
        yield* Effect.exit(send(request("15550100003", "msg_b", text)))
        yield* send(request("15550100003", "msg_b", text))
        yield* Effect.exit(send(request("16315551181", "msg_c", template)))
        yield* Effect.exit(send(request("15550100005", "msg_d", text)))

        assert.deepStrictEqual(yield* simulator.sends, [
          { messageId: "msg_a", to: "16315551181", body: text, at: START, outcome: "Accepted" },
          { messageId: "msg_b", to: "15550100003", body: text, at: START + 10, outcome: "Rejected" },
          { messageId: "msg_b", to: "15550100003", body: text, at: START + 10, outcome: "Accepted" },
          { messageId: "msg_c", to: "16315551181", body: template, at: START + 10, outcome: "Rejected" },
          { messageId: "msg_d", to: "15550100005", body: text, at: START + 10, outcome: "OutcomeUnknown" }
        ])
        assert.strictEqual(yield* simulator.countFor("msg_a"), 1)
        assert.strictEqual(yield* simulator.countFor("msg_b"), 2)
        assert.strictEqual(yield* simulator.countFor("msg_c"), 1)
        assert.strictEqual(yield* simulator.countFor("msg_d"), 1)
        assert.strictEqual(yield* simulator.countFor("msg_never"), 0)
      })
    )
  )

  it.effect("hands out a copy: a later send does not change a list already read", () =>
    withSimulator(() =>
      Effect.gen(function* () {
        const simulator = yield* SimulatorTransport.Simulator
        yield* send(request("16315551181", "msg_a"))
        const before = yield* simulator.sends
        yield* send(request("16315551181", "msg_b"))
        assert.strictEqual(before.length, 1)
        assert.strictEqual((yield* simulator.sends).length, 2)
      })
    )
  )
})

describe("SimulatorTransport failures while playing", () => {
  it.effect("a refused signature is logged at WARNING and the next statuses are still played", () =>
    withSimulator(
      ({ seen, logs }) =>
        Effect.gen(function* () {
          const accepted = yield* send(request("16315551181", "msg_refused"))
          assert.strictEqual(accepted.externalId, wamid("msg_refused"))
          yield* TestClock.adjust(2500)
          assert.strictEqual(seen.length, 3)
          assert.isTrue(seen.every((delivery) => !delivery.verified))
          const warnings = logs.filter((log) => log.level === "Warn" && log.message.includes("msg_refused"))
          assert.strictEqual(warnings.length, 3)
          expect(warnings[0]!.message).toContain("refused the signature of the sent status")
        }),
      { secret: "another-secret" }
    )
  )

  it.effect("a defect in the inbound handler is logged at WARNING and does not stop the fiber", () =>
    withSimulator(
      ({ seen, logs }) =>
        Effect.gen(function* () {
          yield* send(request("16315551181", "msg_boom"))
          yield* TestClock.adjust(2500)
          assert.deepStrictEqual(
            seen.map((delivery) => statusOf(delivery).status),
            ["sent", "delivered", "read"]
          )
          const warnings = logs.filter((log) => log.level === "Warn")
          assert.strictEqual(warnings.length, 1)
          expect(warnings[0]!.message).toContain("the sent status of msg_boom failed")
        }),
      { answer: (delivery, call) => (call === 1 ? Effect.die(new Error("database away")) : honest(delivery, call)) }
    )
  )
})

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
