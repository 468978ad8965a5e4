import { Cause, Effect, Exit } from "effect"
import type { HttpApi, HttpApiClient, HttpApiGroup } from "effect/http-api"
import * as Client from "@leadline/http-adapter/Client"

/** An API refusal (or a failure to reach it), carrying the text the page shows. */
export class ApiError extends Error {}

/** What the API said, in its own words: `{error, code}` bodies become their `error` text. */
const toApiError = (cause: Cause.Cause<unknown>): ApiError => {
  const failure = Cause.squash(cause)
  if (typeof failure === "object" && failure !== null) {
    const body = failure as { error?: unknown; _tag?: unknown; message?: unknown }
    if (typeof body.error === "string") return new ApiError(body.error)
    if (body._tag === "HttpClientError") return new ApiError("Could not reach the server")
    if (typeof body.message === "string") return new ApiError(body.message)
  }
  return new ApiError(String(failure))
}

/**
 * The `call` of a page: runs one call of the typed client of `api` with the session's token.
 * Each page names the groups it uses (`HttpApi.make("inbox").add(ConversationsApi)`, the same
 * group definitions as the server), so its chunk carries those routes' schemas and no others:
 * a client of the whole API put every route in every page load.
 */
export const routes = <Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<string, Groups>) => {
  const clients = new Map<string, Promise<HttpApiClient.Client<Groups>>>()
  const clientFor = (token: string) => {
    let client = clients.get(token)
    if (client === undefined) {
      client = Effect.runPromise(Client.makeFor(api, { baseUrl: location.origin, apiKey: token }))
      clients.set(token, client)
    }
    return client
  }
  return async <A>(
    token: string,
    use: (client: HttpApiClient.Client<Groups>) => Effect.Effect<A, unknown>
  ): Promise<A> => {
    const exit = await Effect.runPromiseExit(
      Effect.flatMap(
        Effect.promise(() => clientFor(token)),
        use
      )
    )
    if (Exit.isSuccess(exit)) return exit.value
    throw toApiError(exit.cause)
  }
}

/**
 * An `Idempotency-Key` for one form: kept across retries of the same submission (a double
 * click or a lost answer creates once), renewed after a success.
 */
export const idempotencyKey = () => `dashboard-${crypto.randomUUID()}`

/**
 * A file of the API (an inbound message's media) as a Blob: fetched with the session's Bearer
 * header, since an `<img src>` or a link could only carry the key in its URL.
 */
export const fetchBlob = async (token: string, path: string): Promise<Blob> => {
  const reply = await fetch(`${location.origin}${path}`, { headers: { authorization: `Bearer ${token}` } })
  if (!reply.ok) {
    const body = (await reply.json().catch(() => undefined)) as { error?: unknown } | undefined
    throw new ApiError(typeof body?.error === "string" ? body.error : `The file could not be fetched (${reply.status})`)
  }
  return reply.blob()
}
