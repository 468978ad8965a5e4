import { Effect } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { type HttpApi, HttpApiClient, type HttpApiGroup } from "effect/http-api"
import { Api } from "./Api.ts"

interface Options {
  readonly baseUrl: string
  readonly apiKey: string
}

const authorized = (options: Options) => (client: HttpClient.HttpClient) =>
  client.pipe(
    HttpClient.mapRequest((request) =>
      request.pipe(HttpClientRequest.prependUrl(options.baseUrl), HttpClientRequest.bearerToken(options.apiKey))
    )
  )

/**
 * A typed client for the whole API: `client.leads.create({ payload, headers })`,
 * `client.identity.me()`. Requests carry `apiKey` as a bearer token; failures
 * come back as the wire error classes of `WireErrors`.
 */
export const make = (options: Options) => HttpApiClient.make(Api, { transformClient: authorized(options) })

/** `make` with the platform's fetch as transport. */
export const makeWithFetch = (options: Options) => make(options).pipe(Effect.provide(FetchHttpClient.layer))

export type Client = HttpApiClient.ForApi<typeof Api>

/**
 * `makeWithFetch` for an API of some of this package's groups (`HttpApi.make("x").add(LeadsApi)`):
 * a bundle that imports it carries those groups' schemas and no others, which is how the
 * dashboard's pages stay small. The groups' middleware asks nothing of a client (the key is the
 * bearer header), so none is required.
 */
export const makeFor = <Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<string, Groups>,
  options: Options
): Effect.Effect<HttpApiClient.Client<Groups>> =>
  HttpApiClient.make(api, { transformClient: authorized(options) }).pipe(
    Effect.provide(FetchHttpClient.layer)
  ) as Effect.Effect<HttpApiClient.Client<Groups>>
