import { ByteSize, Effect } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Inbound } from "@leadline/core/whatsapp/Inbound"
import { toResponse } from "../ErrorMapping.ts"
import { DEFAULT_MAX_BODY_BYTES, tooLarge as overLimit } from "../RequestEnvelope.ts"
import { Forbidden, Unauthorized } from "../WireErrors.ts"

const PATH = "/webhooks/whatsapp"
const acknowledged = HttpServerResponse.jsonUnsafe({})
const badSignature = toResponse(new Unauthorized({ error: "Missing or wrong X-Hub-Signature-256" }))
const badToken = toResponse(new Forbidden({ error: "Wrong verify token" }))
const tooLarge = overLimit(DEFAULT_MAX_BODY_BYTES)

/**
 * WhatsApp's webhook (docs/contract-messaging.md §6.1): plain router routes, not HttpApi endpoints,
 * because the signature is over the raw bytes and must be checked before anything parses them.
 */
export const routes = HttpRouter.use((router) =>
  Effect.gen(function* () {
    const inbound = yield* Inbound
    yield* router.add(
      "GET",
      PATH,
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const query = new URL(request.url, "http://localhost").searchParams
        const challenge = yield* inbound.handshake({
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
        // The API's body limit, also while a chunked body streams in (docs/contract-messaging.md §6.1).
        const length = request.headers["content-length"]
        if (length !== undefined && Number(length) > DEFAULT_MAX_BODY_BYTES) return tooLarge
        const body = yield* Effect.result(
          Effect.provideService(
            request.arrayBuffer,
            HttpIncomingMessage.MaxBodySize,
            ByteSize.bytes(DEFAULT_MAX_BODY_BYTES)
          )
        )
        if (body._tag === "Failure") return tooLarge
        const raw = new Uint8Array(body.success)
        const receipt = yield* inbound.receive(raw, request.headers["x-hub-signature-256"])
        return receipt._tag === "Unauthorized" ? badSignature : acknowledged
      })
    )
  })
)
