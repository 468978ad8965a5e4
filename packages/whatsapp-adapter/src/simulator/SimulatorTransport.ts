import { type CustomerInput, CustomerSimulator } from "@leadline/core/whatsapp/CustomerSimulator"
import {
  type Accepted,
  MessageTransport,
  type OutboundBody,
  type OutboundRequest,
  OutcomeUnknown,
  type ReadRequest,
  Rejected,
  type UploadRequest
} from "@leadline/core/messages/MessageTransport"
import * as Tracing from "@leadline/core/Tracing"
import type { DeliveryStatus } from "@leadline/core/whatsapp/InboundBatch"
import * as MetaPayloads from "../meta/MetaPayloads.ts"
import * as MetaSignature from "../meta/MetaSignature.ts"
import { MetaApp } from "../webhook/MetaApp.ts"
import { type Reception, WebhookReceiver } from "../webhook/WebhookReceiver.ts"
import {
  Array as Arr,
  Cause,
  Clock,
  Config,
  Context,
  Effect,
  Layer,
  Queue,
  Redacted,
  Schema,
  Scope,
  Stream
} from "effect"
import { Base64Url } from "effect/encoding"

/**
 * `MessageTransport` that plays Meta offline (docs/contract-messaging.md §6.4): it accepts a send,
 * then delivers Meta-shaped status webhooks, signed with the deployment's app secret, to
 * `WebhookReceiver.receive`, the handler behind `POST /webhooks/whatsapp`. Scripted recipients
 * and template names produce the provider's failures, in the manner of Stripe's test cards.
 */

export interface Options {
  /**
   * Waits before the `sent`, `delivered` and `read` statuses, each counted from the one
   * before it (`sent` from the accepted send), so the order holds whatever the values.
   */
  readonly delaysMs: readonly [number, number, number]
}

export const defaults: Options = { delaysMs: [0, 500, 2000] }

/** The `display_phone_number` of every simulated channel. */
export const DISPLAY_PHONE_NUMBER = "15550000000"

/** The wamid Meta's stand-in gives our message id: the same id always gets the same wamid. */
export const externalIdFor = (messageId: string): string => `wamid.SIM${Base64Url.encode(messageId)}`

export interface SendRecord {
  /** Our message id (`callbackData`). */
  readonly messageId: string
  readonly to: string
  readonly body: OutboundBody
  /** Clock time of the attempt, in milliseconds. */
  readonly at: number
  readonly outcome: "Accepted" | "Rejected" | "OutcomeUnknown"
}

/**
 * What the customer sends: `text`, or a `choice` on one of our interactive messages; `replyTo`
 * (our message id) becomes Meta's `context`. `from` is digits as Meta sends them; E.164 with "+"
 * is accepted too.
 */
export type CustomerMessage = CustomerInput

/** A read receipt the simulator took. */
export interface ReadRecord {
  readonly phoneNumberId: string
  readonly externalId: string
  /** Clock time, in milliseconds. */
  readonly at: number
}

/** A file the simulator took (docs/contract-messaging.md §6.4). */
export interface UploadRecord {
  readonly phoneNumberId: string
  readonly contentType: string
  readonly filename: string | null
  /** The bytes read, counted as they streamed. */
  readonly size: number
  /** The id it answered (`sim-media-…`), or null when it refused the file. */
  readonly mediaId: string | null
}

/** The simulator's own controls: what was sent, and Meta's side of an inbound conversation. */
export class Simulator extends Context.Service<
  Simulator,
  {
    /** The send attempts, in order, refused ones included (the latest 10,000). */
    readonly sends: Effect.Effect<ReadonlyArray<SendRecord>>
    /** The read receipts taken, in order (the latest 10,000). */
    readonly reads: Effect.Effect<ReadonlyArray<ReadRecord>>
    /** The file uploads, in order, refused ones included (the latest 10,000). */
    readonly uploads: Effect.Effect<ReadonlyArray<UploadRecord>>
    /** How many times a send was attempted for our message id: 1 proves at-most-once. */
    readonly countFor: (messageId: string) => Effect.Effect<number>
    /** The customer writes in: a signed inbound text or interactive reply webhook, as Meta would post it. */
    readonly playCustomer: (
      message: CustomerMessage
    ) => Effect.Effect<{ readonly external_id: string; readonly receipt: Reception }>
    /** Any Meta webhook body, signed and submitted as Meta would. */
    readonly playWebhook: (raw: Uint8Array) => Effect.Effect<Reception>
  }
>()("whatsapp-adapter/Simulator") {}

type Step = { readonly status: DeliveryStatus; readonly afterMs: number }

type Due = MetaPayloads.StatusOptions & { readonly phoneNumberId: string }

/** A sent message's statuses still to play, the first one next. */
type Playing = { readonly request: OutboundRequest; readonly steps: ReadonlyArray<Step> }

/** "the sent status of msg_…, …" for a log line, naming five at most. */
const describe = (statuses: ReadonlyArray<Due>): string => {
  const named = statuses.slice(0, 5).map((status) => `the ${status.status} status of ${status.callbackData}`)
  return statuses.length > 5 ? `${named.join(", ")} and ${statuses.length - 5} more` : named.join(", ")
}

/** Sends remembered for `sends` and `countFor`. */
const MAX_RECORDS = 10_000

/** Statuses in one simulated webhook at most. */
const MAX_STATUSES = 100

const undeliverable = { code: 131026, title: "Message undeliverable", message: "Message undeliverable" }

const rateLimited = () =>
  new Rejected({
    retryable: true,
    retryAfterMs: null,
    providerCode: 130429,
    message: "Rate limit hit",
    channelError: false
  })

const missingTemplate = () =>
  new Rejected({
    retryable: false,
    retryAfterMs: null,
    providerCode: 132001,
    message: "Template name does not exist in the translation",
    channelError: false
  })

const randomWamid = (): string => `wamid.SIM${Base64Url.encode(globalThis.crypto.getRandomValues(new Uint8Array(18)))}`

const stripPlus = (from: string): string => (from.startsWith("+") ? from.slice(1) : from)

/** The transport, its log and the customer it plays, over the `WebhookReceiver` in context; the status fibers live in the current scope. */
export const make = (
  options: Partial<Options> = {}
): Effect.Effect<
  Context.Context<MessageTransport | Simulator | CustomerSimulator>,
  never,
  WebhookReceiver | Scope.Scope
> =>
  Effect.gen(function* () {
    const { delaysMs } = { ...defaults, ...options }
    const receiver = yield* WebhookReceiver
    const app = yield* MetaApp
    const scope = yield* Scope.Scope
    // Statuses are Meta's doing, not the caller's: they run with what the layer was built
    // with, not with the sender's span, annotations or transaction.
    const built = yield* Effect.context<never>()
    // The latest sends, for tests and demos; older ones are forgotten so a long-running server stays small.
    const records: Array<SendRecord> = []
    const readRecords: Array<ReadRecord> = []
    const uploadRecords: Array<UploadRecord> = []
    const attempts = new Map<string, number>()

    const signAndReceive = (raw: Uint8Array): Effect.Effect<Reception> =>
      receiver.receive(raw, MetaSignature.sign(Redacted.value(app.appSecret), raw))

    // Statuses due at the same moment go out in one webhook per number, as Meta batches them:
    // the receiving side then merges them in one transaction instead of one each. A message's
    // next status is scheduled only once its last one was played, so the order holds.
    const due = yield* Queue.unbounded<Playing>()

    /** Queues the first of `steps` when its delay has passed (at once for none, without a fiber). */
    const schedule = (playing: Playing): Effect.Effect<void> => {
      const [next] = playing.steps
      if (next === undefined) return Effect.void
      if (next.afterMs <= 0) return Effect.asVoid(Queue.offer(due, playing))
      return Effect.sleep(next.afterMs).pipe(
        Effect.andThen(Queue.offer(due, playing)),
        Effect.provideContext(built),
        Effect.forkIn(scope),
        Effect.asVoid
      )
    }

    const flush = (batch: ReadonlyArray<Playing>) =>
      Effect.gen(function* () {
        const timestamp = new Date(yield* Clock.currentTimeMillis)
        const all = batch.map(
          ({ request, steps }): Due => ({
            phoneNumberId: request.channel.phoneNumberId,
            externalId: externalIdFor(request.callbackData),
            status: steps[0]!.status,
            recipientId: request.to,
            callbackData: request.callbackData,
            timestamp,
            error: steps[0]!.status === "failed" ? undeliverable : undefined
          })
        )
        yield* Effect.forEach(
          Object.entries(Arr.groupBy(all, (status) => status.phoneNumberId)),
          ([phoneNumberId, statuses]) =>
            Effect.gen(function* () {
              const receipt = yield* signAndReceive(
                MetaPayloads.statusesPayload(phoneNumberId, DISPLAY_PHONE_NUMBER, statuses)
              )
              if (receipt._tag === "Unauthorized") {
                yield* Effect.logWarning(
                  `WhatsApp simulator: the webhook refused the signature of ${describe(statuses)}`
                )
              }
            }).pipe(
              // Statuses lost must not stop the next: Meta would keep sending.
              Effect.catchCause((cause) =>
                Cause.hasInterruptsOnly(cause)
                  ? Effect.failCause(cause)
                  : Effect.logWarning(`WhatsApp simulator: ${describe(statuses)} failed`, cause)
              )
            ),
          { discard: true }
        )
      }).pipe(
        Effect.ensuring(
          Effect.forEach(batch, ({ request, steps }) => schedule({ request, steps: steps.slice(1) }), { discard: true })
        )
      )

    // Two webhooks in flight at most, as Meta keeps a few connections open; they never hold the same message.
    for (let i = 0; i < 2; i++) {
      yield* Effect.forever(Effect.flatMap(Queue.takeBetween(due, 1, MAX_STATUSES), flush)).pipe(
        Effect.provideContext(built),
        Effect.forkIn(scope)
      )
    }

    const play = (request: OutboundRequest, steps: ReadonlyArray<Step>) => schedule({ request, steps })

    const normal: ReadonlyArray<Step> = [
      { status: "sent", afterMs: delaysMs[0] },
      { status: "delivered", afterMs: delaysMs[1] },
      { status: "read", afterMs: delaysMs[2] }
    ]

    const countNow = (messageId: string): number => attempts.get(messageId) ?? 0

    const send = Effect.fnUntraced(function* (request: OutboundRequest) {
      const attempt = countNow(request.callbackData) + 1
      const at = yield* Clock.currentTimeMillis
      const record = (outcome: SendRecord["outcome"]) =>
        Effect.sync(() => {
          records.push({ messageId: request.callbackData, to: request.to, body: request.body, at, outcome })
          attempts.set(request.callbackData, attempt)
          if (records.length > MAX_RECORDS) records.splice(0, records.length - MAX_RECORDS)
          if (attempts.size > MAX_RECORDS) attempts.delete(attempts.keys().next().value!)
        })
      const body = request.body
      if (body.type === "template" && body.name.startsWith("missing_")) {
        yield* record("Rejected")
        return yield* missingTemplate()
      }
      const to = request.to
      if (to.endsWith("0003") && attempt === 1) {
        yield* record("Rejected")
        return yield* rateLimited()
      }
      if (to.endsWith("0004")) {
        yield* record("OutcomeUnknown")
        yield* play(request, normal)
        return yield* new OutcomeUnknown({
          reason: "simulated: no answer after the request was written (Meta accepted it)"
        })
      }
      if (to.endsWith("0005")) {
        yield* record("OutcomeUnknown")
        return yield* new OutcomeUnknown({
          reason: "simulated: no answer after the request was written (Meta never got it)"
        })
      }
      yield* record("Accepted")
      yield* play(
        request,
        to.endsWith("0001") ? [{ status: "failed", afterMs: delaysMs[0] }] : to.endsWith("0002") ? [normal[0]!] : normal
      )
      const accepted: Accepted = { externalId: externalIdFor(request.callbackData), waId: to }
      return accepted
    }, Tracing.span("WhatsAppSimulator.send"))

    // Meta accepts a receipt for any message it delivered; the simulator keeps it for tests.
    const markRead = Effect.fnUntraced(function* (request: ReadRequest) {
      const at = yield* Clock.currentTimeMillis
      readRecords.push({ phoneNumberId: request.channel.phoneNumberId, externalId: request.externalId, at })
      if (readRecords.length > MAX_RECORDS) readRecords.splice(0, readRecords.length - MAX_RECORDS)
    }, Tracing.span("WhatsAppSimulator.markRead"))

    // Meta keeps the file and answers an id; a file named "refused…" plays Meta refusing it (131053).
    const upload = Effect.fnUntraced(function* (request: UploadRequest) {
      const size = yield* Stream.runFold(
        request.bytes,
        () => 0,
        (total, chunk) => total + chunk.length
      )
      const refused = request.filename?.startsWith("refused") === true
      const mediaId = refused ? null : `sim-media-${uploadRecords.length + 1}-${Date.now().toString(36)}`
      uploadRecords.push({
        phoneNumberId: request.channel.phoneNumberId,
        contentType: request.contentType,
        filename: request.filename,
        size,
        mediaId
      })
      if (uploadRecords.length > MAX_RECORDS) uploadRecords.splice(0, uploadRecords.length - MAX_RECORDS)
      if (mediaId === null) {
        return yield* new Rejected({
          retryable: false,
          retryAfterMs: null,
          providerCode: 131053,
          message: "Media upload error",
          channelError: false
        })
      }
      return mediaId
    }, Tracing.span("WhatsAppSimulator.upload"))

    const playCustomer = Effect.fnUntraced(function* (message: CustomerMessage) {
      const externalId = randomWamid()
      const common = {
        phoneNumberId: message.phoneNumberId,
        displayPhoneNumber: DISPLAY_PHONE_NUMBER,
        from: stripPlus(message.from),
        name: message.name ?? null,
        externalId,
        timestamp: new Date(yield* Clock.currentTimeMillis)
      }
      // Our messages have the wamid the simulator gave them when they were sent.
      const repliesTo = message.replyTo === undefined ? undefined : externalIdFor(message.replyTo)
      const raw =
        message.choice === undefined
          ? MetaPayloads.inboundTextPayload({ ...common, text: message.text ?? "", repliesTo })
          : MetaPayloads.inboundInteractiveReplyPayload({ ...common, repliesTo, reply: message.choice })
      const receipt = yield* signAndReceive(raw)
      if (receipt._tag === "Unauthorized") {
        yield* Effect.logWarning("WhatsApp simulator: the webhook refused the signature of a customer message")
      }
      return { external_id: externalId, receipt }
    }, Tracing.span("WhatsAppSimulator.playCustomer"))

    const playWebhook = Effect.fnUntraced(function* (raw: Uint8Array) {
      return yield* signAndReceive(raw)
    }, Tracing.span("WhatsAppSimulator.playWebhook"))

    return Context.make(MessageTransport, MessageTransport.of({ send, markRead, upload })).pipe(
      Context.add(
        CustomerSimulator,
        CustomerSimulator.of({
          playCustomer: (input) => Effect.map(playCustomer(input), ({ external_id }) => ({ external_id })),
          playNumberQuality: Effect.fnUntraced(function* (input) {
            const raw = MetaPayloads.qualityUpdatePayload({
              businessAccountId: input.businessAccountId,
              displayPhoneNumber: input.displayPhoneNumber.replace(/\D/g, ""),
              event: input.event,
              currentLimit: input.currentLimit,
              at: new Date(yield* Clock.currentTimeMillis)
            })
            const receipt = yield* signAndReceive(raw)
            if (receipt._tag === "Unauthorized") {
              yield* Effect.logWarning("WhatsApp simulator: the webhook refused the signature of a quality update")
            }
          })
        })
      ),
      Context.add(
        Simulator,
        Simulator.of({
          sends: Effect.sync(() => records.slice()),
          reads: Effect.sync(() => readRecords.slice()),
          uploads: Effect.sync(() => uploadRecords.slice()),
          countFor: (messageId) => Effect.sync(() => countNow(messageId)),
          playCustomer,
          playWebhook
        })
      )
    )
  })

/**
 * `MessageTransport` and `Simulator`, signing with `MetaApp`'s secret (read when the layer
 * is built). Statuses still on their way when the layer closes are dropped.
 */
export const layer = (
  options: Partial<Options> = {}
): Layer.Layer<MessageTransport | Simulator | CustomerSimulator, never, WebhookReceiver> =>
  Layer.effectContext(make(options))

const DELAYS = /^\s*\d+\s*,\s*\d+\s*,\s*\d+\s*$/

/** `WHATSAPP_SIMULATOR_DELAYS_MS`: `sent,delivered,read` in whole milliseconds (default `0,500,2000`). */
export const config: Config.Config<Options> = Config.all({
  delaysMs: Config.schema(Schema.String.check(Schema.isPattern(DELAYS)), "WHATSAPP_SIMULATOR_DELAYS_MS").pipe(
    Config.map((text): Options["delaysMs"] => {
      const [sent, delivered, read] = text.split(",").map((part) => Number(part.trim()))
      return [sent!, delivered!, read!]
    }),
    Config.withDefault(defaults.delaysMs)
  )
})

/** `layer` with its options from the environment; a malformed setting fails the layer. */
export const layerConfig: Layer.Layer<
  MessageTransport | Simulator | CustomerSimulator,
  Config.ConfigError,
  WebhookReceiver
> = Layer.unwrap(Effect.map(config, (options) => layer(options)))
