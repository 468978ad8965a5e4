import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { type Download, MediaDownloader, MediaFailure } from "@leadline/core/whatsapp/MediaDownloader"
import { Effect, Layer, Stream } from "effect"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { defaults, type Options } from "./CloudTransport.ts"
import * as GraphErrors from "./GraphErrors.ts"

/**
 * `MediaDownloader` over the Graph API (docs/contract-messaging.md §5.8): `GET /{version}/{media id}`
 * answers the file's short-lived URL, type, SHA-256 and size; `GET {url}` answers its bytes. Both
 * carry the channel's token. One attempt per call: the fetcher retries.
 */

const trimSlashes = (value: string) => value.replace(/^\/+|\/+$/g, "")

/** Where a media id's URL is asked for. */
export const mediaUrl = (options: Options, mediaId: string): string =>
  `${options.baseUrl.replace(/\/+$/, "")}/${trimSlashes(options.version)}/${encodeURIComponent(mediaId)}`

const retryable = (message: string) => new MediaFailure({ kind: "retryable", message })

/**
 * What a Graph error answer means for a file: an id Meta does not know (any more) is `gone`;
 * rate limits, Meta's service codes, 429 and 5xx are `retryable`; the rest `rejected`.
 */
export const classifyError = (status: number, body: unknown): MediaFailure => {
  const error = GraphErrors.parseGraphError(body)
  const message = error === undefined ? `HTTP ${status}` : `HTTP ${status}, Graph error ${error.code}: ${error.message}`
  if (error !== undefined && GraphErrors.RETRYABLE_CODES.has(error.code)) return retryable(message)
  if (status === 429 || status >= 500) return retryable(message)
  // 100 is "invalid parameter": Graph's answer for a media id it does not have (or no longer has).
  if (status === 404 || status === 410 || error?.code === 100) return new MediaFailure({ kind: "gone", message })
  return new MediaFailure({ kind: "rejected", message })
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const stringOrNull = (value: unknown) => (typeof value === "string" && value !== "" ? value : null)

/** The downloader over the `HttpClient` in context. */
export const make = (
  options: Partial<Options> = {}
): Effect.Effect<MediaDownloader["Service"], never, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const settings: Options = { ...defaults, ...options }
    const client = (yield* HttpClient.HttpClient).pipe(
      // Trace ids are ours: they are not sent to a third party.
      HttpClient.transformResponse(Effect.provideService(HttpClient.TracerPropagationEnabled, false))
    )
    const failedConnection = (error: { readonly message: string }) =>
      retryable(`the Graph API could not be reached: ${error.message}`)

    const answerOf = (response: HttpClientResponse.HttpClientResponse) =>
      response.text.pipe(
        Effect.mapError(failedConnection),
        Effect.map((text) => {
          try {
            return JSON.parse(text) as unknown
          } catch {
            return undefined
          }
        })
      )

    const download = Effect.fn("WhatsAppCloud.downloadMedia")(function* (
      channel: Parameters<MediaDownloader["Service"]["download"]>[0],
      mediaId: string
    ) {
      const response = yield* client
        .execute(
          HttpClientRequest.get(mediaUrl(settings, mediaId)).pipe(HttpClientRequest.bearerToken(channel.accessToken))
        )
        .pipe(
          Effect.mapError(failedConnection),
          Effect.timeoutOrElse({
            duration: settings.timeoutMillis,
            orElse: () => Effect.fail(retryable(`no answer within ${settings.timeoutMillis} ms`))
          })
        )
      const body = yield* answerOf(response)
      if (response.status < 200 || response.status >= 300) return yield* classifyError(response.status, body)
      const url = isRecord(body) ? stringOrNull(body.url) : null
      if (url === null || !isRecord(body)) return yield* retryable(`HTTP ${response.status} without a url`)
      const fileSize = typeof body.file_size === "number" ? body.file_size : Number(body.file_size)
      const bytes = Stream.unwrap(
        client.execute(HttpClientRequest.get(url).pipe(HttpClientRequest.bearerToken(channel.accessToken))).pipe(
          Effect.mapError(failedConnection),
          Effect.flatMap((file) =>
            file.status >= 200 && file.status < 300
              ? Effect.succeed(file.stream.pipe(Stream.mapError(failedConnection)))
              : // An expired URL is not an expired id: the next attempt asks for a fresh URL.
                Effect.flatMap(answerOf(file), (answer) => {
                  const failure = classifyError(file.status, answer)
                  return Effect.fail(failure.kind === "gone" ? retryable(failure.message) : failure)
                })
          )
        )
      )
      return {
        mimeType: stringOrNull(body.mime_type),
        sha256: stringOrNull(body.sha256),
        fileSize: Number.isFinite(fileSize) ? fileSize : null,
        bytes
      } satisfies Download
    })
    return MediaDownloader.of({ download })
  })

/** The downloader with its own connection pool, closed with the layer. */
export const layer = (options: Partial<Options> = {}): Layer.Layer<MediaDownloader> =>
  Layer.effect(MediaDownloader, make(options)).pipe(Layer.provide(NodeHttpClient.layerUndici))
