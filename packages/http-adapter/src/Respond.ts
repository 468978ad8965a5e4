import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import * as Versioned from "@leadline/core/Versioned"

/**
 * Answers with a value already in wire form, skipping HttpApi's schema encoding.
 * The domain types are the wire types (plain JSON: strings, numbers, arrays), so
 * that pass would only copy them; on a list of 50 leads it was a measurable part
 * of each request. The declared success schemas still describe these bodies in the
 * OpenAPI document and decode them in the typed client.
 */
export const json =
  (status = 200) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
    Effect.map(effect, (body) => HttpServerResponse.jsonUnsafe(body, { status }))

export const ok = json(200)
export const created = json(201)

/**
 * Answers with a versioned resource (a product, an order) and its `ETag: "<version>"`, which a
 * later `If-Match` names (docs/contract-commerce-ai.md §1).
 */
export const versioned =
  (status = 200) =>
  <A extends { readonly version: number }, E, R>(
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
    Effect.map(effect, (body) =>
      HttpServerResponse.jsonUnsafe(body, { status, headers: { etag: Versioned.etag(body.version) } })
    )
