import { NodeHttpServer } from "@effect/platform-node"
import * as Errors from "@leadline/core/Errors"
import { fromDomain, toResponse, wire } from "@leadline/http-adapter/ErrorMapping"
import { createServer } from "@leadline/http-adapter/NodeServer"
import * as WireErrors from "@leadline/http-adapter/WireErrors"
import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import { FetchHttpClient, HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiClient, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/**
 * One error table: an error declares its status, code, description and message once, on its
 * domain class, and the wire class, the mapping and the OpenAPI response follow from that.
 * `ParcelLost` is what a new resource would add: this file is the only place it is written.
 */
class ParcelLost extends Errors.DomainError<ParcelLost>()(
  "ParcelLost",
  { id: Schema.String, carrier: Schema.String },
  {
    status: 410,
    code: "parcel_lost",
    description: "The carrier lost the parcel.",
    message: ({ id, carrier }) => `Parcel ${id} was lost by ${carrier}`,
    headers: { "x-parcel-carrier": "ours" }
  }
) {}

const lose = (id: string) => Effect.fail(new ParcelLost({ id, carrier: "Acme" }))

class ParcelsApi extends HttpApi.make("parcels").add(
  HttpApiGroup.make("parcels").add(
    HttpApiEndpoint.get("get", "/parcels/:id", {
      params: { id: Schema.String },
      success: Schema.Struct({ id: Schema.String }),
      error: [WireErrors.of(ParcelLost), WireErrors.NotFound]
    })
  )
) {}

const handlers = HttpApiBuilder.group(ParcelsApi, "parcels", (group) =>
  group.handle("get", ({ params }) =>
    wire<never, Errors.NotFound | ParcelLost, never>(
      params.id === "missing"
        ? Effect.fail(new Errors.NotFound({ resource: "parcel", id: params.id }))
        : lose(params.id)
    )
  )
)

let baseUrl = ""
const scope = Effect.runSync(Scope.make())

beforeAll(async () => {
  const layer = HttpRouter.serve(HttpApiBuilder.layer(ParcelsApi).pipe(Layer.provide(handlers)), {
    disableLogger: true,
    disableListenLog: true
  }).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  baseUrl = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

describe("an error declared once, on its domain class", () => {
  it("answers with its status and body on a real server, and the typed client gets it by name", async () => {
    const response = await fetch(`${baseUrl}/parcels/p1`)
    expect(response.status).toBe(410)
    expect(await response.json()).toEqual({ error: "Parcel p1 was lost by Acme", code: "parcel_lost" })

    const failure = await Effect.runPromise(
      Effect.flip(
        Effect.flatMap(HttpApiClient.make(ParcelsApi, { baseUrl }), (client) =>
          client.parcels.get({ params: { id: "p2" } })
        )
      ).pipe(Effect.provide(FetchHttpClient.layer))
    )
    expect(failure._tag).toBe("ParcelLost")
    expect(failure).toMatchObject({ error: "Parcel p2 was lost by Acme", code: "parcel_lost" })

    const shared = await fetch(`${baseUrl}/parcels/missing`)
    expect(shared.status).toBe(404)
    expect(await shared.json()).toEqual({ error: "No parcel with id missing", code: "not_found" })
  })

  it("is in the OpenAPI document under its status, with its code and description", () => {
    const document = OpenApi.fromApi(ParcelsApi) as any
    const responses = document.paths["/parcels/{id}"].get.responses
    expect(Object.keys(responses).sort()).toEqual(["200", "404", "410"])
    expect(responses["410"].description).toBe("The carrier lost the parcel.")
    const schema = document.components.schemas.ParcelLostEncoded
    expect(schema.properties.code).toMatchObject({ enum: ["parcel_lost"] })
    expect(schema.required).toEqual(["error", "code"])
  })

  it("carries the headers it declares, and the transport keeps its own answers' headers", async () => {
    const response = toResponse(fromDomain(new ParcelLost({ id: "p3", carrier: "Acme" })))
    expect(response.status).toBe(410)
    expect(response.headers["x-parcel-carrier"]).toBe("ours")
    expect(toResponse(fromDomain(new Errors.Unauthenticated({ reason: "revoked" }))).headers["www-authenticate"]).toBe(
      "Bearer"
    )
    expect(toResponse(new WireErrors.ServiceUnavailable({ error: "down" })).headers["retry-after"]).toBe("1")
  })
})

describe('the contract\'s shared errors (docs/contract.md, "Errors")', () => {
  const cases: ReadonlyArray<[Errors.DomainError, number, Record<string, unknown>]> = [
    [
      new Errors.Unauthenticated({ reason: "unknown" }),
      401,
      { error: "Invalid or missing API key", code: "unauthorized" }
    ],
    [
      new Errors.PermissionDenied({ required: "leads:write" }),
      403,
      { error: "Insufficient scope: requires leads:write", code: "forbidden" }
    ],
    [new Errors.NotFound({ resource: "lead", id: "ld_1" }), 404, { error: "No lead with id ld_1", code: "not_found" }],
    [new Errors.Conflict({ message: "Phone taken" }), 409, { error: "Phone taken", code: "conflict" }],
    [
      Errors.invalidField("email", "not an email"),
      400,
      {
        error: "Invalid request body: email: not an email",
        code: "validation_error",
        details: [{ path: "email", message: "not an email" }]
      }
    ],
    [
      new Errors.WindowClosed(),
      409,
      {
        error: "The customer has not written in the last 24 hours; send a template",
        code: "customer_service_window_closed"
      }
    ],
    [
      new Errors.LimitReached({ used: 5, limit: 5, plan: "free" }),
      402,
      { error: "Monthly message limit reached: 5 of 5 on plan free", code: "message_limit_reached" }
    ],
    [
      new Errors.InvalidTransition({ field: "status", from: "paid", to: "pending", allowed: ["shipped"] }),
      409,
      {
        error: "Cannot change status from paid to pending",
        code: "invalid_transition",
        details: [{ path: "status", message: "shipped" }]
      }
    ],
    [
      new Errors.InsufficientStock({ sku: "TEE", available: 1, requested: 3 }),
      409,
      { error: "Insufficient stock for TEE: 3 asked, 1 left", code: "insufficient_stock" }
    ],
    [
      new Errors.PreconditionFailed({ current: 4 }),
      412,
      { error: 'If-Match does not match the current version (ETag "4")', code: "precondition_failed" }
    ],
    [
      new Errors.AiProviderError({ message: "sk-secret echoed" }),
      502,
      { error: "The AI provider failed to answer", code: "ai_provider_error" }
    ],
    [
      new Errors.AiProviderTimeout({ timeoutMs: 2000 }),
      504,
      { error: "The AI provider did not answer within 2000 ms", code: "ai_provider_timeout" }
    ],
    [
      new Errors.IdempotencyInProgress(),
      409,
      {
        error: "A request with this Idempotency-Key is still in progress; retry shortly",
        code: "idempotency_in_progress"
      }
    ],
    [
      new Errors.IdempotencyKeyReused(),
      422,
      {
        error: "This Idempotency-Key was already used with a different method, path or body",
        code: "idempotency_key_reused"
      }
    ]
  ]
  it.each(cases)("%s goes on the wire as declared", async (error, status, body) => {
    const response = toResponse(fromDomain(error))
    expect(response.status).toBe(status)
    expect(WireErrors.bodyOf(fromDomain(error))).toEqual(body)
    expect(Errors.isDomainError(error)).toBe(true)
  })

  it("tells domain errors from wire errors and from anything else", () => {
    expect(Errors.isDomainError(new WireErrors.NotFound({ error: "x" }))).toBe(false)
    expect(Errors.isDomainError(new Errors.StoreUnavailable({ message: "down" }))).toBe(false)
    expect(WireErrors.isWireError(new WireErrors.NotFound({ error: "x" }))).toBe(true)
    expect(WireErrors.isWireError(new Errors.NotFound({ resource: "lead", id: "x" }))).toBe(false)
  })
})
