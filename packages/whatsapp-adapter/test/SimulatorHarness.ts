import { assert } from "@effect/vitest"
import {
  MessageTransport,
  type OutboundBody,
  type OutboundRequest,
  type SendFailure
} from "@leadline/core/messages/MessageTransport"
import type { DeliveryStatus, StatusUpdate } from "@leadline/core/whatsapp/InboundBatch"
import { Effect, Layer, Logger, Queue, Redacted } from "effect"
import { TestClock } from "effect/testing"
import * as MetaSignature from "../src/meta/MetaSignature.ts"
import * as MetaWebhook from "../src/meta/MetaWebhook.ts"
import * as SimulatorTransport from "../src/simulator/SimulatorTransport.ts"
import { MetaApp } from "../src/webhook/MetaApp.ts"
import { type Reception, WebhookReceiver } from "../src/webhook/WebhookReceiver.ts"

/** What both simulator test files share: a simulator over a recording receiver, and its helpers. */
export const SECRET = "simulator-test-secret"
const app = { appSecret: Redacted.make(SECRET), verifyToken: Redacted.make("verify") }
export const PHONE_NUMBER_ID = "106540352242922"
/** 2025-01-01T00:00:00Z: status timestamps are whole seconds of the clock. */
export const START = Date.UTC(2025, 0, 1)

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

type Answer = (delivery: Delivery, call: number) => Effect.Effect<Reception>

/** Like `WebhookReceiver`: verifies the signature with `MetaApp`'s secret, then parses the same bytes. */
export const honest: Answer = (delivery) =>
  Effect.succeed(
    delivery.verified
      ? ({ _tag: "Accepted", stored: 0, duplicates: 0, skipped: 0 } as const)
      : ({ _tag: "Unauthorized" } as const)
  )

export const withSimulator = <A, E>(
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
    const receiver = Layer.succeed(
      WebhookReceiver,
      WebhookReceiver.of({
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
          Layer.provide(receiver)
        )
      ),
      Effect.provide(logger),
      Effect.provideService(MetaApp, app)
    )
  })

export const request = (
  to: string,
  callbackData: string,
  body: OutboundBody = { type: "text", text: "Hello" }
): OutboundRequest => ({
  channel: { phoneNumberId: PHONE_NUMBER_ID, accessToken: Redacted.make("token") },
  to,
  body,
  callbackData
})

export const send = (req: OutboundRequest) => MessageTransport.use((transport) => transport.send(req))

/** The one status a simulated webhook carries, after checking its envelope. */
export const statusOf = (delivery: Delivery): StatusUpdate => {
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

export const wamid = (messageId: string) => `wamid.SIM${Buffer.from(messageId, "utf8").toString("base64url")}`

export const expectStatus = (
  delivery: Delivery,
  expected: { status: DeliveryStatus; messageId: string; to: string; at: number }
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
export const fieldsOf = (error: SendFailure) =>
  error._tag === "Rejected"
    ? {
        retryable: error.retryable,
        retryAfterMs: error.retryAfterMs,
        providerCode: error.providerCode,
        message: error.message,
        channelError: error.channelError
      }
    : { reason: error.reason }

export const drain = (queue: Queue.Queue<Delivery>) => Queue.poll(queue)
