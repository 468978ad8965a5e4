import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Inbound } from "@leadline/core/whatsapp/Inbound"
import { toResponse } from "../ErrorMapping.ts"
import { Forbidden, Unauthorized } from "../WireErrors.ts"

const PATH = "/webhooks/whatsapp"
const acknowledged = HttpServerResponse.jsonUnsafe({})
const badSignature = toResponse(new Unauthorized({ error: "Missing or wrong X-Hub-Signature-256" }))
const badToken = toResponse(new Forbidden({ error: "Wrong verify token" }))

/**
 * WhatsApp's webhook (CONTRACT-MESSAGING §6.1): plain router routes, not HttpApi endpoints,
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
        const raw = new Uint8Array(yield* Effect.orDie(request.arrayBuffer))
        const receipt = yield* inbound.receive(raw, request.headers["x-hub-signature-256"])
        return receipt._tag === "Unauthorized" ? badSignature : acknowledged
      })
    )
  })
)
