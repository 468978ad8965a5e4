import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import {
  MessageTransport,
  type OutboundRequest,
  OutcomeUnknown,
  type ReadRequest,
  Rejected,
  type UploadRequest
} from "@leadline/core/messages/MessageTransport"
import { Config, Effect, Layer, type Result, Schema, Stream } from "effect"
import { HttpClient, type HttpClientError, HttpClientRequest } from "effect/http"
import * as GraphErrors from "./GraphErrors.ts"

/**
 * `MessageTransport` over the WhatsApp Cloud API (docs/contract-messaging.md §6.3): one
 * `POST {baseUrl}/{version}/{phoneNumberId}/messages` per send, never retried here, so the
 * sender alone decides what happens after a failure.
 */

export interface Options {
  /** Without a trailing slash; a loopback mock in tests. */
  readonly baseUrl: string
  readonly version: string
  /** The whole exchange, connecting included, until the answer's body is read. */
  readonly timeoutMillis: number
  /** A file upload's whole exchange (5 min: a 100 MB document on a slow link); never shorter than a send's. */
  readonly uploadTimeoutMillis?: number | undefined
}

export const defaults: Options = {
  baseUrl: "https://graph.facebook.com",
  version: "v24.0",
  timeoutMillis: 15_000
}

/** A file upload's timeout unless set: 5 minutes. */
export const DEFAULT_UPLOAD_TIMEOUT_MILLIS = 300_000

/** The longest connect undici gets: its own default, shortened to fit inside a short send timeout. */
const MAX_CONNECT_MILLIS = 10_000

const trimSlashes = (value: string) => value.replace(/^\/+|\/+$/g, "")

/** Where a send for `phoneNumberId` goes. */
export const messagesUrl = (options: Options, phoneNumberId: string): string =>
  `${options.baseUrl.replace(/\/+$/, "")}/${trimSlashes(options.version)}/${encodeURIComponent(phoneNumberId)}/messages`

/** Where a file for `phoneNumberId` is uploaded. */
export const mediaUrl = (options: Options, phoneNumberId: string): string =>
  `${options.baseUrl.replace(/\/+$/, "")}/${trimSlashes(options.version)}/${encodeURIComponent(phoneNumberId)}/media`

const encoder = new TextEncoder()

/** A filename as a multipart header can carry it: no quote, no line break, never empty. */
const headerFilename = (filename: string | null): string =>
  filename === null || filename === "" ? "file" : filename.replace(/["\r\n\\]/g, "_")

/**
 * Meta's upload body (`multipart/form-data`: `messaging_product=whatsapp`, `type` = the content
 * type, `file`), streamed: the parts before and after the file are built, its bytes pass through.
 */
export const uploadBody = (
  request: Omit<UploadRequest, "channel">,
  boundary: string
): { readonly contentType: string; readonly contentLength: number; readonly stream: Stream.Stream<Uint8Array> } => {
  const field = (name: string, value: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
  const head = encoder.encode(
    field("messaging_product", "whatsapp") +
      field("type", request.contentType) +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${headerFilename(request.filename)}"\r\n` +
      `Content-Type: ${request.contentType}\r\n\r\n`
  )
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`)
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: head.length + request.size + tail.length,
    stream: Stream.concat(Stream.concat(Stream.make(head), request.bytes), Stream.make(tail))
  }
}

/** What a message says, in Meta's words for its type. */
const contentOf = (body: OutboundRequest["body"]): Record<string, unknown> => {
  switch (body.type) {
    case "text":
      return { type: "text", text: { body: body.text, preview_url: false } }
    case "template":
      return {
        type: "template",
        template: { name: body.name, language: { code: body.language }, components: body.components }
      }
    case "interactive":
      return { type: "interactive", interactive: body.interactive }
    case "reaction":
      return { type: "reaction", reaction: { message_id: body.externalId, emoji: body.emoji } }
    case "image":
    case "video":
    case "audio":
    case "document":
    case "sticker":
      return { type: body.type, [body.type]: mediaObject(body) }
  }
}

/** A file, as Meta takes it for its type: its id at Graph or a link; a caption and a document's filename when given. */
const mediaObject = (body: Extract<OutboundRequest["body"], { readonly media: unknown }>): Record<string, unknown> => ({
  ...body.media,
  ...(body.caption === null ? {} : { caption: body.caption }),
  ...(body.type === "document" && body.filename !== null ? { filename: body.filename } : {})
})

/** The JSON body Meta documents for a text, template, interactive, reaction or file message. */
export const requestBody = (request: OutboundRequest): Record<string, unknown> => {
  const common = { messaging_product: "whatsapp", recipient_type: "individual", to: request.to }
  return { ...common, ...contentOf(request.body), biz_opaque_callback_data: request.callbackData }
}

/** Meta's read receipt: `status: "read"` on the inbound message's wamid. */
export const readBody = (request: ReadRequest): Record<string, unknown> => ({
  messaging_product: "whatsapp",
  status: "read",
  message_id: request.externalId
})

const encodeBody = (request: OutboundRequest): Effect.Effect<string, Rejected> =>
  Effect.try({
    try: () => JSON.stringify(requestBody(request)),
    // Template components are caller data: a cycle or a BigInt fails here, before any connection.
    catch: (cause) =>
      new Rejected({
        retryable: false,
        retryAfterMs: null,
        providerCode: null,
        message: `the request body could not be encoded: ${cause instanceof Error ? cause.message : String(cause)}`,
        channelError: false
      })
  })

/** A failure of `execute`, before any answer: it depends on whether the request was written. */
const beforeAnswer = (error: HttpClientError.HttpClientError) => {
  const reason = error.reason
  switch (reason._tag) {
    case "TransportError":
      return GraphErrors.classifyTransportError(reason.cause)
    case "InvalidUrlError":
    case "EncodeError":
      // Nothing was sent, and the same request would fail the same way.
      return new Rejected({
        retryable: false,
        retryAfterMs: null,
        providerCode: null,
        message: `the request could not be built: ${reason.message}`,
        channelError: false
      })
    default:
      return new OutcomeUnknown({ reason: reason.message })
  }
}

/** The transport over the `HttpClient` in context, for callers that bring their own client. */
export const make = (
  options: Partial<Options> = {}
): Effect.Effect<MessageTransport["Service"], never, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const settings: Options = { ...defaults, ...options }
    const client = yield* HttpClient.HttpClient

    const post = <A>(
      phoneNumberId: string,
      accessToken: OutboundRequest["channel"]["accessToken"],
      body: string,
      classify: (status: number, text: string) => Result.Result<A, Rejected | OutcomeUnknown>
    ): Effect.Effect<A, Rejected | OutcomeUnknown> =>
      exchange(
        HttpClientRequest.post(messagesUrl(settings, phoneNumberId)).pipe(
          HttpClientRequest.bearerToken(accessToken),
          HttpClientRequest.bodyText(body, "application/json")
        ),
        classify,
        settings.timeoutMillis
      )

    /** One request and its classified answer, within `timeoutMillis` for the whole exchange. */
    const exchange = <A>(
      request: HttpClientRequest.HttpClientRequest,
      classify: (status: number, text: string) => Result.Result<A, Rejected | OutcomeUnknown>,
      timeoutMillis: number
    ): Effect.Effect<A, Rejected | OutcomeUnknown> =>
      client.execute(request).pipe(
        Effect.mapError(beforeAnswer),
        Effect.flatMap((response) =>
          response.text.pipe(
            // The status line arrived, so Meta has the request; a body cut short says nothing more.
            Effect.mapError(
              (error) => new OutcomeUnknown({ reason: `HTTP ${response.status}, body unreadable: ${error.message}` })
            ),
            Effect.flatMap((text) => Effect.fromResult(classify(response.status, text)))
          )
        ),
        Effect.timeoutOrElse({
          duration: timeoutMillis,
          orElse: () => Effect.fail(GraphErrors.timedOut(timeoutMillis))
        }),
        // Trace ids are ours: they are not sent to a third party.
        Effect.provideService(HttpClient.TracerPropagationEnabled, false)
      )

    const send = Effect.fn("WhatsAppCloud.send")(function* (request: OutboundRequest) {
      const body = yield* encodeBody(request)
      return yield* post(request.channel.phoneNumberId, request.channel.accessToken, body, GraphErrors.classifyResponse)
    })

    const markRead = Effect.fn("WhatsAppCloud.markRead")(function* (request: ReadRequest) {
      return yield* post(
        request.channel.phoneNumberId,
        request.channel.accessToken,
        JSON.stringify(readBody(request)),
        GraphErrors.classifyReadResponse
      )
    })
    // An upload sends no message: whatever its outcome, trying again is safe (§6.3).
    const upload = Effect.fn("WhatsAppCloud.upload")(function* (request: UploadRequest) {
      const body = uploadBody(request, `leadline-${crypto.randomUUID()}`)
      return yield* exchange(
        HttpClientRequest.post(mediaUrl(settings, request.channel.phoneNumberId)).pipe(
          HttpClientRequest.bearerToken(request.channel.accessToken),
          HttpClientRequest.bodyStream(body.stream, {
            contentType: body.contentType,
            contentLength: body.contentLength
          })
        ),
        GraphErrors.classifyUploadResponse,
        Math.max(settings.timeoutMillis, settings.uploadTimeoutMillis ?? DEFAULT_UPLOAD_TIMEOUT_MILLIS)
      ).pipe(Effect.mapError(GraphErrors.uploadFailure))
    })

    return MessageTransport.of({ send, markRead, upload })
  })

/** The transport with its own undici connection pool, closed with the layer. */
export const layer = (options: Partial<Options> = {}): Layer.Layer<MessageTransport> => {
  const timeoutMillis = options.timeoutMillis ?? defaults.timeoutMillis
  return Layer.effect(MessageTransport, make(options)).pipe(
    Layer.provide(
      NodeHttpClient.layerUndiciOptions({
        // A connect that gives up inside the send timeout is a certain "not sent" (retryable)
        // rather than an unknown outcome.
        connect: { timeout: Math.max(1, Math.min(MAX_CONNECT_MILLIS, Math.floor(timeoutMillis / 2))) }
      })
    )
  )
}

/** `WHATSAPP_API_BASE_URL`, `WHATSAPP_API_VERSION`, `WHATSAPP_SEND_TIMEOUT_SECONDS` (§11). */
export const config: Config.Config<Options> = Config.all({
  baseUrl: Config.URL("WHATSAPP_API_BASE_URL").pipe(
    Config.map((url) => url.href.replace(/\/+$/, "")),
    Config.withDefault(defaults.baseUrl)
  ),
  // Meta's versions are `vNN.N`; "24.0" or a stray space is caught at startup, not at the first send.
  version: Config.schema(Schema.String.check(Schema.isPattern(/^v\d+\.\d+$/)), "WHATSAPP_API_VERSION").pipe(
    Config.withDefault(defaults.version)
  ),
  timeoutMillis: Config.schema(Schema.Finite.check(Schema.isGreaterThan(0)), "WHATSAPP_SEND_TIMEOUT_SECONDS").pipe(
    Config.map((seconds) => Math.max(1, Math.round(seconds * 1000))),
    Config.withDefault(defaults.timeoutMillis)
  )
})

/** `layer` with its options from the environment; a malformed setting fails the layer. */
export const layerConfig: Layer.Layer<MessageTransport, Config.ConfigError> = Layer.unwrap(
  Effect.map(config, (options) => layer(options))
)
