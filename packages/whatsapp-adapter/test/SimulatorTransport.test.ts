import { assert, describe, expect, it } from "@effect/vitest"
import type { Accepted } from "@leadline/core/messages/MessageTransport"
import { Effect, Exit, Option, Queue } from "effect"
import { TestClock } from "effect/testing"
import * as SimulatorTransport from "../src/simulator/SimulatorTransport.ts"
import {
  START,
  honest,
  withSimulator,
  request,
  send,
  statusOf,
  wamid,
  expectStatus,
  fieldsOf,
  drain
} from "./SimulatorHarness.ts"

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
