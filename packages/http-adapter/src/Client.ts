import { Effect } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Api } from "./Api.ts"

/**
 * A typed client for the whole API: `client.leads.create({ payload, headers })`,
 * `client.identity.me()`. Requests carry `apiKey` as a bearer token; failures
 * come back as the wire error classes of `WireErrors`.
 */
export const make = (options: { readonly baseUrl: string; readonly apiKey: string }) =>
  HttpApiClient.make(Api, {
    transformClient: (client) =>
      client.pipe(
        HttpClient.mapRequest((request) =>
          request.pipe(HttpClientRequest.prependUrl(options.baseUrl), HttpClientRequest.bearerToken(options.apiKey))
        )
      )
  })

/** `make` with the platform's fetch as transport. */
export const makeWithFetch = (options: { readonly baseUrl: string; readonly apiKey: string }) =>
  make(options).pipe(Effect.provide(FetchHttpClient.layer))

export type Client = HttpApiClient.ForApi<typeof Api>
