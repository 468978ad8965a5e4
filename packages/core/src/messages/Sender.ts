import * as Tracing from "../Tracing.ts"
import { Array as Arr, Cause, Clock, Duration, Effect, Fiber, Layer, Random, Schedule, Scope } from "effect"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { systemPrincipal } from "../auth/SystemPrincipal.ts"
import * as Ids from "../Ids.ts"
import type { Interactive } from "./Interactive.ts"
import { sentMedia } from "./Message.ts"
import { type FileMissing, MediaUploads } from "./MediaUploads.ts"
import { MessageStatuses, type Update } from "./MessageStatuses.ts"
import {
  MessageTransport,
  type OutboundBody,
  OutcomeUnknown,
  type Rejected,
  type SendFailure
} from "./MessageTransport.ts"
import { isSendType } from "./UploadedMedia.ts"
import { type DeliveryError as Failure, OUTCOME_UNKNOWN } from "./StatusMerge.ts"
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

/** What goes to the provider; a file send's `graphMediaId` is its uploaded file's id at Graph. */
const bodyOf = (claimed: ClaimedMessage, graphMediaId: string | undefined): OutboundBody => {
  const { message } = claimed
  const media = sentMedia(message)
  if (isSendType(message.type) && media !== null) {
    return {
      type: message.type,
      media: graphMediaId !== undefined ? { id: graphMediaId } : { link: media.link ?? "" },
      caption: media.caption,
      filename: media.filename
    }
  }
  if (message.type === "text") return { type: "text", text: message.text ?? "" }
  if (message.type === "interactive") return { type: "interactive", interactive: message.interactive as Interactive }
  // A reaction is queued only with its target's wamid (docs/contract-messaging.md §5.5).
  if (message.type === "reaction") {
    return { type: "reaction", externalId: message.reply_to?.external_id ?? "", emoji: message.text ?? "" }
  }
  const template = message.template as { name: string; language: string; components?: ReadonlyArray<unknown> }
  return { type: "template", name: template.name, language: template.language, components: template.components ?? [] }
}

/** 2^attempts seconds up to 300 s, ±10 %; Meta's pair limit (131056) asks for 4^attempts. */
const backoffMillis = (attempts: number, providerCode: number | null, jitter: number) => {
  const base = providerCode === 131056 ? 4 ** attempts : 2 ** attempts
  return Math.min(base, 300) * 1000 * (0.9 + 0.2 * jitter)
}

/** Sends whose slots fall within this span of the first go out together (one `beginSend`, one record). */
const WAVE_MILLIS = 100

/**
 * Sends in flight at once, and so the most a wave holds. A wave is begun before its calls and
 * its record runs while the next wave goes out, so a sender that dies leaves at most two waves
 * in doubt (`outcome_unknown`, revived by WhatsApp's statuses for those it did get). Smaller
 * waves would mean fewer in doubt and more statements: 16 sent 880 messages/s, 50 sent 1,200
 * (bench/MESSAGING.md).
 */
const IN_FLIGHT = 50

type Ending = { readonly claimed: ClaimedMessage; readonly update: Update }

/**
 * The outbound sender (docs/contract-messaging.md §7): claims queued messages, hands each to the
 * transport once, and records the outcome through `MessageStatuses`. A send whose outcome
 * is unknown (a timeout, a sender that died mid-call) is never repeated: a WhatsApp message
 * cannot be unsent, so it ends `failed` with `outcome_unknown` unless a status proves it
 * arrived. Work is done in waves (up to 50 sends due within 100 ms of each other): each wave
 * is begun in one statement and its outcomes recorded in one transaction per account, so the
 * store's cost per message falls as the traffic grows.
 */
export const layer = (options: Options = {}) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const queue = yield* OutboundQueue
      const transport = yield* MessageTransport
      const uploads = yield* MediaUploads
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
      // Uploads to Graph under way in this process, by account, media and channel: two sends of one
      // file on one channel wait for the same upload rather than make two (§5.9).
      const uploading = new Map<string, Fiber.Fiber<string, Rejected | FileMissing>>()
      // File messages this process is sending on their own fibers: a claim that finds one again skips it.
      const sendingFiles = new Set<string>()
      const scope = yield* Scope.Scope

      /** The time this message may go, reserved in its channel's bucket. */
      const slotFor = (phoneNumberId: string, now: number) => {
        const earliest = Math.max(now, cooling.get(phoneNumberId)?.until ?? now)
        if (rate <= 0) return earliest
        const slot = Math.max(earliest, nextSlot.get(phoneNumberId) ?? now)
        nextSlot.set(phoneNumberId, slot + 1000 / rate)
        return slot
      }

      const coolDown = (phoneNumberId: string, now: number) => {
        const millis = Math.min(60_000, (cooling.get(phoneNumberId)?.millis ?? 500) * 2)
        cooling.set(phoneNumberId, { until: now + millis, millis })
      }

      const failed = (claimed: ClaimedMessage, at: string, error: Failure): Ending => ({
        claimed,
        update: { messageId: claimed.message.id, incoming: { status: "failed", at, error } }
      })

      /**
       * Records endings, one transaction per account. A store outage loses only these records:
       * their leases run out and the messages end `outcome_unknown`.
       */
      const record = (endings: ReadonlyArray<Ending>) =>
        Effect.forEach(
          Object.entries(Arr.groupBy(endings, (ending) => ending.claimed.accountId)),
          ([accountId, group]) =>
            statuses
              .applyAll(
                accountId,
                group.map((ending) => ending.update)
              )
              .pipe(Effect.provideService(CurrentPrincipal, systemPrincipal(accountId, "sender"))),
          { discard: true }
        ).pipe(orWarn<void>("Recording messages failed", undefined))

      /** What a refused or unanswered send becomes: an ending, or back in the queue (undefined). */
      const afterFailure = (claimed: ClaimedMessage, failure: SendFailure, at: string) =>
        Effect.gen(function* () {
          if (failure._tag === "OutcomeUnknown") {
            return failed(claimed, at, {
              code: OUTCOME_UNKNOWN,
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
          const now = yield* Clock.currentTimeMillis
          if (failure.providerCode === THROUGHPUT) coolDown(claimed.channel.phoneNumberId, now)
          if (failure.retryable && claimed.attempts < MAX_ATTEMPTS) {
            const delay = backoffMillis(claimed.attempts, failure.providerCode, yield* Random.next)
            yield* queue.retryLater(claimed.accountId, claimed.message.id, now + delay)
            return undefined
          }
          return failed(claimed, at, {
            code: "provider_error",
            message: failure.message,
            provider_code: failure.providerCode
          })
        })

      /**
       * An uploaded file's id at Graph on the message's channel, uploaded first when Graph does not
       * have it (docs/contract-messaging.md §7.3); undefined for every other message.
       */
      const graphMediaOf = (claimed: ClaimedMessage): Effect.Effect<string | undefined, Rejected | FileMissing> => {
        const mediaId = sentMedia(claimed.message)?.media_id ?? null
        if (mediaId === null) return Effect.succeed(undefined)
        const channel = { phoneNumberId: claimed.channel.phoneNumberId, accessToken: claimed.channel.accessToken }
        const key = `${claimed.accountId}/${mediaId}/${claimed.message.channel_id}`
        return Effect.suspend(() => {
          const running = uploading.get(key)
          if (running !== undefined) return Fiber.join(running)
          return uploads
            .graphIdFor(claimed.accountId, mediaId, claimed.message.channel_id, (file) =>
              transport.upload({ ...file, channel })
            )
            .pipe(
              Tracing.span("Sender.upload"),
              Effect.ensuring(Effect.sync(() => uploading.delete(key))),
              Effect.forkIn(scope),
              Effect.tap((fiber) => Effect.sync(() => uploading.set(key, fiber))),
              Effect.flatMap(Fiber.join)
            )
        })
      }

      /** An upload refused for good, or a file gone: the message fails with its own code, nothing was sent. */
      const uploadFailed = (claimed: ClaimedMessage, failure: Rejected | FileMissing, at: string) =>
        failure._tag === "FileMissing"
          ? Effect.succeed(
              failed(claimed, at, {
                code: "media_missing",
                message: `The file ${failure.mediaId} is no longer in the media store`,
                provider_code: null
              })
            )
          : Effect.map(afterFailure(claimed, failure, at), (ending) =>
              ending === undefined
                ? undefined
                : failed(claimed, at, {
                    code: "media_upload_failed",
                    message: `WhatsApp refused the file: ${failure.message}`,
                    provider_code: failure.providerCode
                  })
            )

      const sendOne = (claimed: ClaimedMessage) =>
        Effect.gen(function* () {
          const graphMedia = yield* Effect.result(graphMediaOf(claimed))
          if (graphMedia._tag === "Failure") return yield* uploadFailed(claimed, graphMedia.failure, yield* Ids.now)
          const result = yield* Effect.exit(
            transport
              .send({
                channel: { phoneNumberId: claimed.channel.phoneNumberId, accessToken: claimed.channel.accessToken },
                to: claimed.to,
                body: bodyOf(claimed, graphMedia.success),
                callbackData: claimed.message.id
              })
              .pipe(Tracing.span("Sender.send"))
          )
          const at = yield* Ids.now
          if (result._tag === "Success") {
            cooling.delete(claimed.channel.phoneNumberId)
            return {
              claimed,
              update: {
                messageId: claimed.message.id,
                incoming: { status: "sent", at, error: null },
                learned: { externalId: result.value.externalId, waId: result.value.waId }
              }
            } satisfies Ending
          }
          if (Cause.hasInterrupts(result.cause)) return yield* Effect.interrupt
          const failure = Cause.findErrorOption(result.cause)
          // A defect in the transport happened after the request may have left: as unknown as a timeout.
          return yield* afterFailure(
            claimed,
            failure._tag === "Some" ? failure.value : new OutcomeUnknown({ reason: Cause.pretty(result.cause) }),
            at
          )
        })

      /**
       * One wave: begun in one statement (committed before any call), sent; its record is left
       * running while the next wave goes out, and waited for before the one after that.
       */
      const sendWave = (wave: ReadonlyArray<ClaimedMessage>) =>
        Effect.gen(function* () {
          const begun = yield* queue.beginSend(
            worker,
            wave.map((claimed) => ({ accountId: claimed.accountId, id: claimed.message.id })),
            yield* Clock.currentTimeMillis
          )
          // A message whose lease was lost meanwhile may be another sender's now: not sent.
          const mine = wave.filter((claimed) => begun.has(claimed.message.id))
          const endings = yield* Effect.forEach(mine, sendOne, { concurrency: "unbounded" })
          return endings.filter((ending) => ending !== undefined)
        }).pipe(orWarn("Sending messages failed", [] as ReadonlyArray<Ending>))

      const drain: Effect.Effect<number> = Effect.gen(function* () {
        const claimedAt = yield* Clock.currentTimeMillis
        const claimed = yield* queue.claim(worker, claimedAt, leaseMillis, batch)
        const at = yield* Ids.now
        const endings: Array<Ending> = []
        const ready: Array<ClaimedMessage> = []
        const files: Array<ClaimedMessage> = []
        for (const message of claimed) {
          // Still being sent by this process (its lease ran out during a long upload): its fiber ends it.
          if (sendingFiles.has(message.message.id)) continue
          if (message.interrupted) {
            endings.push(
              failed(message, at, {
                code: OUTCOME_UNKNOWN,
                message:
                  "The sender stopped during the send; the provider may have the message, so it is not sent again",
                provider_code: null
              })
            )
          } else if (!message.channel.active) {
            endings.push(
              failed(message, at, { code: "channel_disabled", message: "The channel is disabled", provider_code: null })
            )
          } else if (sentMedia(message.message)?.media_id != null) files.push(message)
          else ready.push(message)
        }
        yield* record(endings)
        // A file may need an upload first (up to minutes for a large one): each goes on a fiber of
        // its own, so the waves of texts and templates never wait for it.
        for (const file of files) {
          sendingFiles.add(file.message.id)
          yield* Effect.gen(function* () {
            yield* sleepUntil(slotFor(file.channel.phoneNumberId, yield* Clock.currentTimeMillis))
            yield* record(yield* sendWave([file]))
          }).pipe(Effect.ensuring(Effect.sync(() => sendingFiles.delete(file.message.id))), Effect.forkIn(scope))
        }
        // Slots are taken one wave at a time, so a cool-down met in one wave moves the next.
        let recording: Fiber.Fiber<void> | undefined
        const flush = (wave: ReadonlyArray<ClaimedMessage>, start: number) =>
          Effect.gen(function* () {
            yield* sleepUntil(start)
            const endings = yield* sendWave(wave)
            if (recording !== undefined) yield* Fiber.join(recording)
            recording = yield* Effect.forkChild(record(endings))
          })
        let wave: Array<ClaimedMessage> = []
        let waveStart = 0
        for (const message of ready) {
          const slot = slotFor(message.channel.phoneNumberId, yield* Clock.currentTimeMillis)
          if (wave.length > 0 && (slot - waveStart > WAVE_MILLIS || wave.length >= IN_FLIGHT)) {
            yield* flush(wave, waveStart)
            wave = []
          }
          if (wave.length === 0) waveStart = slot
          wave.push(message)
        }
        if (wave.length > 0) yield* flush(wave, waveStart)
        if (recording !== undefined) yield* Fiber.join(recording)
        return claimed.length
      })

      const loop = Effect.gen(function* () {
        const wakeup = yield* queue.wakeups
        while (true) {
          // A full batch means more may be waiting: claim again at once. A failed round (the
          // store away, a defect) is logged and the loop goes on after the poll interval.
          const claimed = yield* drain.pipe(orWarn("The message sender's round failed", 0))
          if (claimed >= batch) continue
          yield* Effect.raceFirst(wakeup, Effect.sleep(Duration.millis(pollMillis)))
        }
      }).pipe(Effect.scoped, Effect.retry(Schedule.spaced("1 second")))

      yield* Effect.forkScoped(loop)
    })
  )

/** A failure (not an interruption) logged at WARNING, and `fallback` in its place: the sender goes on. */
const orWarn =
  <A>(what: string, fallback: A) =>
  <E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, never, R> =>
    Effect.catchCause(effect, (cause) =>
      Cause.hasInterrupts(cause) ? Effect.interrupt : Effect.as(Effect.logWarning(what, cause), fallback)
    )

const sleepUntil = (time: number) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    time > now ? Effect.sleep(Duration.millis(time - now)) : Effect.void
  )
