import { ByteSize, Effect } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { WebhookReceiver } from "./WebhookReceiver.ts"

export const PATH = "/webhooks/whatsapp"

/**
 * The route's body limit: Meta documents webhook payloads of up to 3 MB, and a delivery refused
 * for its size would be retried unchanged until Meta gives up on it (docs/contract-messaging.md §6.1).
 */
export const MAX_BODY_BYTES = 3 * 1024 * 1024

/** Why the route refuses a request; the server answers it in the API's error format. */
export type Rejection =
  | { readonly status: 400; readonly message: string }
  | { readonly status: 401; readonly message: string }
  | { readonly status: 403; readonly message: string }
  | { readonly status: 413; readonly message: string }

/** Refused requests a source may make (the http-adapter's `RateLimit.refusalBudget`). */
export interface RefusalBudget {
  /** The answer to a source that has spent its budget, else undefined: asked before anything is read. */
  readonly check: Effect.Effect<
    HttpServerResponse.HttpServerResponse | undefined,
    never,
    HttpServerRequest.HttpServerRequest
  >
  /** Counts a refusal against the request's source. */
  readonly spend: Effect.Effect<void, never, HttpServerRequest.HttpServerRequest>
}

export interface Options {
  /** The body limit, also while a chunked body streams in; `MAX_BODY_BYTES` unless set. */
  readonly maxBodyBytes?: number | undefined
  /** The answer to a refused request (the http-adapter's `ErrorMapping.rejection`). */
  readonly reject: (rejection: Rejection) => HttpServerResponse.HttpServerResponse
  /** The per-source budget of refused requests, or undefined for none (built once, with the routes). */
  readonly budget?: Effect.Effect<RefusalBudget | undefined> | undefined
}

const acknowledged = HttpServerResponse.jsonUnsafe({})

type Handler = Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
type Refuse = (response: HttpServerResponse.HttpServerResponse) => Handler

/**
 * WhatsApp's webhook (docs/contract-messaging.md §6.1) as plain router routes, not HttpApi
 * endpoints: the signature is over the raw bytes and must be checked before anything parses
 * them. Served beside the API by `@leadline/server`; needs a `WebhookReceiver`.
 *
 * A source that has spent its budget of refusals is answered 429 before its request is read.
 * What spends it is what anyone can send: a wrong handshake token, a missing or wrong signature,
 * a body over the limit. A signed body that is no WhatsApp webhook (400) does not: only the app
 * secret's holder, Meta, can send one, and its deliveries must not be held up by it.
 */
export const routes = (options: Options) => {
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES
  const badSignature = options.reject({ status: 401, message: "Missing or wrong X-Hub-Signature-256" })
  const badToken = options.reject({ status: 403, message: "Wrong verify token" })
  const tooLarge = options.reject({
    status: 413,
    message: `The request body is over the limit of ${maxBodyBytes} bytes`
  })
  const malformed = (reason: string) =>
    options.reject({ status: 400, message: `The body is not a WhatsApp Business Account webhook: ${reason}` })
  return HttpRouter.use((router) =>
    Effect.gen(function* () {
      const receiver = yield* WebhookReceiver
      const budget = options.budget === undefined ? undefined : yield* options.budget
      /** Runs `handler` unless the source is over its budget; the refusals it passes to `refuse` spend it. */
      const guarded = (handler: (refuse: Refuse) => Handler): Handler => {
        if (budget === undefined) return handler(Effect.succeed)
        const refuse: Refuse = (response) => Effect.as(budget.spend, response)
        return Effect.flatMap(budget.check, (over) => (over === undefined ? handler(refuse) : Effect.succeed(over)))
      }
      yield* router.add(
        "GET",
        PATH,
        guarded((refuse) =>
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            const query = new URL(request.url, "http://localhost").searchParams
            const challenge = yield* receiver.handshake({
              mode: query.get("hub.mode") ?? undefined,
              token: query.get("hub.verify_token") ?? undefined,
              challenge: query.get("hub.challenge") ?? undefined
            })
            return challenge === undefined ? yield* refuse(badToken) : HttpServerResponse.text(challenge)
          })
        )
      )
      yield* router.add(
        "POST",
        PATH,
        guarded((refuse) =>
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            const length = request.headers["content-length"]
            if (length !== undefined && Number(length) > maxBodyBytes) return yield* refuse(tooLarge)
            const body = yield* Effect.result(
              Effect.provideService(request.arrayBuffer, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBodyBytes))
            )
            if (body._tag === "Failure") return yield* refuse(tooLarge)
            const reception = yield* receiver.receive(
              new Uint8Array(body.success),
              request.headers["x-hub-signature-256"]
            )
            switch (reception._tag) {
              case "Unauthorized":
                return yield* refuse(badSignature)
              case "Malformed":
                return malformed(reception.reason)
              case "Accepted":
                return acknowledged
            }
          })
        )
      )
    })
  )
}
