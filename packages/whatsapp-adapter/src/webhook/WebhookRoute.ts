import { ByteSize, Effect } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { WebhookReceiver } from "./WebhookReceiver.ts"

export const PATH = "/webhooks/whatsapp"

/** Why the route refuses a request; the server answers it in the API's error format. */
export type Rejection =
  | { readonly status: 401; readonly message: string }
  | { readonly status: 403; readonly message: string }
  | { readonly status: 413; readonly message: string }

export interface Options {
  /** The API's body limit, also while a chunked body streams in (docs/contract-messaging.md §6.1). */
  readonly maxBodyBytes: number
  /** The answer to a refused request (the http-adapter's `ErrorMapping.rejection`). */
  readonly reject: (rejection: Rejection) => HttpServerResponse.HttpServerResponse
}

const acknowledged = HttpServerResponse.jsonUnsafe({})

/**
 * WhatsApp's webhook (docs/contract-messaging.md §6.1) as plain router routes, not HttpApi
 * endpoints: the signature is over the raw bytes and must be checked before anything parses
 * them. Served beside the API by `@leadline/server`; needs a `WebhookReceiver`.
 */
export const routes = (options: Options) => {
  const badSignature = options.reject({ status: 401, message: "Missing or wrong X-Hub-Signature-256" })
  const badToken = options.reject({ status: 403, message: "Wrong verify token" })
  const tooLarge = options.reject({
    status: 413,
    message: `The request body is over the limit of ${options.maxBodyBytes} bytes`
  })
  return HttpRouter.use((router) =>
    Effect.gen(function* () {
      const receiver = yield* WebhookReceiver
      yield* router.add(
        "GET",
        PATH,
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const query = new URL(request.url, "http://localhost").searchParams
          const challenge = yield* receiver.handshake({
            mode: query.get("hub.mode") ?? undefined,
            token: query.get("hub.verify_token") ?? undefined,
            challenge: query.get("hub.challenge") ?? undefined
          })
          return challenge === undefined ? badToken : HttpServerResponse.text(challenge)
        })
      )
      yield* router.add(
        "POST",
        PATH,
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const length = request.headers["content-length"]
          if (length !== undefined && Number(length) > options.maxBodyBytes) return tooLarge
          const body = yield* Effect.result(
            Effect.provideService(
              request.arrayBuffer,
              HttpIncomingMessage.MaxBodySize,
              ByteSize.bytes(options.maxBodyBytes)
            )
          )
          if (body._tag === "Failure") return tooLarge
          const reception = yield* receiver.receive(
            new Uint8Array(body.success),
            request.headers["x-hub-signature-256"]
          )
          return reception._tag === "Unauthorized" ? badSignature : acknowledged
        })
      )
    })
  )
}
