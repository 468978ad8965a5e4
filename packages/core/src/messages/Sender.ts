import { Clock, Duration, Effect, Layer, Random, Schedule } from "effect"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { systemPrincipal } from "../auth/SystemPrincipal.ts"
import * as Ids from "../Ids.ts"
import { MessageStatuses } from "./MessageStatuses.ts"
import { type OutboundBody, MessageTransport, type SendFailure } from "./MessageTransport.ts"
import { type ClaimedMessage, OutboundQueue } from "./OutboundQueue.ts"

export interface Options {
  /** How long a claim holds a message (30 s). */
  readonly leaseMillis?: number | undefined
  /** Messages claimed at once (50). */
  readonly batch?: number | undefined
  /** The fallback poll when no wake-up comes (1 s). */
  readonly pollMillis?: number | undefined
  /** Sends per channel per second (`WHATSAPP_SEND_RATE`, 20); 0 turns the limit off. */
  readonly ratePerChannel?: number | undefined
}

/** WhatsApp's "too many messages from this number" (§7.2). */
const THROUGHPUT = 130429

/** Attempts before a message that keeps being refused for now is failed (§7.3). */
export const MAX_ATTEMPTS = 10

const bodyOf = (claimed: ClaimedMessage): OutboundBody => {
  const { message } = claimed
  if (message.type === "text") return { type: "text", text: message.text ?? "" }
  const template = message.template as { name: string; language: string; components?: ReadonlyArray<unknown> }
  return { type: "template", name: template.name, language: template.language, components: template.components ?? [] }
}

/** 2^attempts seconds up to 300 s, ±10 %; Meta's pair limit (131056) asks for 4^attempts. */
const backoffMillis = (attempts: number, providerCode: number | null, jitter: number) => {
  const base = providerCode === 131056 ? 4 ** attempts : 2 ** attempts
  return Math.min(base, 300) * 1000 * (0.9 + 0.2 * jitter)
}

/**
 * The outbound sender (CONTRACT-MESSAGING §7): claims queued messages, hands each to the
 * transport once, and records the outcome through `MessageStatuses`. A send whose outcome
 * is unknown (a timeout, a sender that died mid-call) is never repeated: a WhatsApp message
 * cannot be unsent, so it ends `failed` with `outcome_unknown` unless a status proves it
 * arrived.
 */
export const layer = (options: Options = {}) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const queue = yield* OutboundQueue
      const transport = yield* MessageTransport
      const statuses = yield* MessageStatuses
      const worker = yield* Ids.make("snd")
      const leaseMillis = options.leaseMillis ?? 30_000
      const batch = options.batch ?? 50
      const pollMillis = options.pollMillis ?? 1000
      const rate = options.ratePerChannel ?? 20
      // Token buckets per channel, in this process (§7.2): the earliest time each may send next.
      const nextSlot = new Map<string, number>()
      // A channel WhatsApp refused for throughput (130429) cools down 1, 2, 4 … 60 s, until a send goes through.
      const cooling = new Map<string, { until: number; millis: number }>()

      const pace = (phoneNumberId: string) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const cool = cooling.get(phoneNumberId)
          const earliest = Math.max(now, cool?.until ?? now)
          const slot = rate <= 0 ? earliest : Math.max(earliest, nextSlot.get(phoneNumberId) ?? now)
          if (rate > 0) nextSlot.set(phoneNumberId, slot + 1000 / rate)
          if (slot > now) yield* Effect.sleep(Duration.millis(slot - now))
        })

      const coolDown = (phoneNumberId: string) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const millis = Math.min(60_000, (cooling.get(phoneNumberId)?.millis ?? 500) * 2)
          cooling.set(phoneNumberId, { until: now + millis, millis })
        })

      const fail = (claimed: ClaimedMessage, error: { code: string; message: string; provider_code: number | null }) =>
        Effect.flatMap(Ids.now, (at) =>
          statuses.apply(claimed.accountId, claimed.message.id, { status: "failed", at, error })
        )

      const outcome = (claimed: ClaimedMessage, failure: SendFailure) =>
        Effect.gen(function* () {
          if (failure._tag === "OutcomeUnknown") {
            return yield* fail(claimed, {
              code: "outcome_unknown",
              message: `The provider may have the message (${failure.reason}); it is not sent again`,
              provider_code: null
            })
          }
          if (failure.channelError === true) {
            // The token or its permissions were refused: the account sees it on the channel.
            yield* queue.channelRefused(claimed.accountId, claimed.message.channel_id, {
              code: "provider_error",
              message: failure.message,
              provider_code: failure.providerCode
            })
          }
          if (failure.providerCode === THROUGHPUT) yield* coolDown(claimed.channel.phoneNumberId)
          if (failure.retryable && claimed.attempts < MAX_ATTEMPTS) {
            const now = yield* Clock.currentTimeMillis
            const delay = backoffMillis(claimed.attempts, failure.providerCode, yield* Random.next)
            return yield* queue.retryLater(claimed.accountId, claimed.message.id, now + delay)
          }
          return yield* fail(claimed, {
            code: "provider_error",
            message: failure.message,
            provider_code: failure.providerCode
          })
        })

      const sendOne = (claimed: ClaimedMessage) =>
        Effect.gen(function* () {
          if (claimed.interrupted) {
            return yield* fail(claimed, {
              code: "outcome_unknown",
              message: "The sender stopped during the send; the provider may have the message, so it is not sent again",
              provider_code: null
            })
          }
          if (!claimed.channel.active) {
            return yield* fail(claimed, {
              code: "channel_disabled",
              message: "The channel is disabled",
              provider_code: null
            })
          }
          yield* pace(claimed.channel.phoneNumberId)
          // Committed before the call: if this process dies during it, the message is known to be in doubt.
          if (
            !(yield* queue.beginSend(worker, claimed.accountId, claimed.message.id, yield* Clock.currentTimeMillis))
          ) {
            return
          }
          const result = yield* Effect.result(
            transport.send({
              channel: { phoneNumberId: claimed.channel.phoneNumberId, accessToken: claimed.channel.accessToken },
              to: claimed.to,
              body: bodyOf(claimed),
              callbackData: claimed.message.id
            })
          )
          if (result._tag === "Failure") return yield* outcome(claimed, result.failure)
          cooling.delete(claimed.channel.phoneNumberId)
          const at = yield* Ids.now
          yield* statuses.apply(
            claimed.accountId,
            claimed.message.id,
            { status: "sent", at, error: null },
            { externalId: result.success.externalId, waId: result.success.waId }
          )
        }).pipe(
          Effect.provideService(CurrentPrincipal, systemPrincipal(claimed.accountId, "sender")),
          // One message's trouble (a store outage) must not stop the others: its lease runs out and it is claimed again.
          Effect.catchCause((cause) => Effect.logWarning("Sending a message failed", cause))
        )

      const drain: Effect.Effect<number> = Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const claimed = yield* queue.claim(worker, now, leaseMillis, batch)
        yield* Effect.forEach(claimed, sendOne, { concurrency: 8, discard: true })
        return claimed.length
      })

      const loop = Effect.gen(function* () {
        const wakeup = yield* queue.wakeups
        while (true) {
          // A full batch means more may be waiting: claim again at once.
          if ((yield* drain) >= batch) continue
          yield* Effect.raceFirst(wakeup, Effect.sleep(Duration.millis(pollMillis)))
        }
      }).pipe(Effect.scoped, Effect.retry(Schedule.spaced("1 second")))

      yield* Effect.forkScoped(loop)
    })
  )
