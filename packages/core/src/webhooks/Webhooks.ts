import { Clock, Context, Effect, Layer } from "effect"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import { Conflict, decodeInput, InvalidInput, NotFound, type PermissionDenied } from "../Errors.ts"
import * as Ids from "../Ids.ts"
import * as Random from "../internal/random.ts"
import * as Pagination from "../Pagination.ts"
import { SECRET_PREFIX } from "./Signature.ts"
import { problemWith } from "../outbound/UrlPolicy.ts"
import type {
  CreatedEndpoint,
  Delivery,
  Endpoint,
  EndpointRecord,
  RecoveredDeliveries,
  RegisterEndpoint,
  RotatedSecret
} from "./Webhook.ts"
import { RecoverDeliveries, RotateSecret, UpdateEndpoint } from "./Webhook.ts"
import { type DeliveryFilter, WebhooksRepo } from "./WebhooksRepo.ts"
import * as Tracing from "../Tracing.ts"
import { OutboundSettings } from "../outbound/OutboundSettings.ts"

const publicView = (record: EndpointRecord): Endpoint => ({
  id: record.id,
  url: record.url,
  events: record.events,
  description: record.description,
  enabled: record.enabled,
  retry_policy: record.retry_policy,
  created_at: record.created_at
})

type Needs = CurrentPrincipal

const newSecret = () => SECRET_PREFIX + Random.base64(Random.randomBytes(32))

/** A rotation's overlap unless the caller names one: a day, as Svix keeps the old secret. */
const DEFAULT_OVERLAP_SECONDS = 24 * 3600

/** Endpoint registration and the delivery log. Only full-access keys manage webhooks. */
export class Webhooks extends Context.Service<
  Webhooks,
  {
    readonly register: (
      input: RegisterEndpoint
    ) => Effect.Effect<CreatedEndpoint, PermissionDenied | InvalidInput, Needs>
    readonly listEndpoints: (
      page: Pagination.Page
    ) => Effect.Effect<{ endpoints: ReadonlyArray<Endpoint>; meta: Pagination.Meta }, PermissionDenied, Needs>
    readonly update: (
      id: string,
      input: UpdateEndpoint
    ) => Effect.Effect<Endpoint, PermissionDenied | NotFound | InvalidInput, Needs>
    readonly remove: (id: string) => Effect.Effect<{ id: string; deleted: true }, PermissionDenied | NotFound, Needs>
    readonly listDeliveries: (
      filter: DeliveryFilter,
      page: Pagination.Page
    ) => Effect.Effect<{ deliveries: ReadonlyArray<Delivery>; meta: Pagination.Meta }, PermissionDenied, Needs>
    readonly redeliver: (id: string) => Effect.Effect<Delivery, PermissionDenied | NotFound | Conflict, Needs>
    readonly rotateSecret: (
      id: string,
      input: RotateSecret
    ) => Effect.Effect<RotatedSecret, PermissionDenied | NotFound | InvalidInput, Needs>
    readonly recover: (
      id: string,
      input: RecoverDeliveries
    ) => Effect.Effect<RecoveredDeliveries, PermissionDenied | NotFound | InvalidInput, Needs>
  }
>()("core/Webhooks") {
  static readonly layer = Layer.effect(
    Webhooks,
    Effect.gen(function* () {
      const repo = yield* WebhooksRepo
      const settings = yield* OutboundSettings
      const manage = authorize("webhooks.manage")

      const checkUrl = (url: string) => {
        const problem = problemWith(url, { allowPrivate: settings.allowPrivateUrls })
        return problem === undefined
          ? Effect.void
          : Effect.fail(new InvalidInput({ message: problem, details: [{ path: "url", message: problem }] }))
      }
      const decodeUpdate = decodeInput(UpdateEndpoint, "endpoint")

      const register = Effect.fnUntraced(function* (input: RegisterEndpoint) {
        const principal = yield* manage
        yield* checkUrl(input.url)
        const record: EndpointRecord = {
          id: yield* Ids.uuid,
          accountId: principal.accountId,
          url: input.url,
          events: input.events,
          description: input.description ?? null,
          enabled: true,
          retry_policy: input.retry_policy ?? "seed",
          created_at: yield* Ids.now,
          secret: newSecret(),
          previousSecret: null,
          previousSecretExpiresAt: null,
          failingSince: null
        }
        yield* repo.insertEndpoint(record)
        return { ...publicView(record), secret: record.secret }
      }, Tracing.span("Webhooks.register"))

      const listEndpoints = Effect.fnUntraced(function* (page: Pagination.Page) {
        const principal = yield* manage
        const slice = yield* repo.listEndpoints(principal.accountId, page)
        return { endpoints: slice.items.map(publicView), meta: Pagination.meta(page, slice.total) }
      }, Tracing.span("Webhooks.listEndpoints"))

      const update = Effect.fnUntraced(function* (id: string, raw: UpdateEndpoint) {
        const principal = yield* manage
        const input = yield* decodeUpdate(raw)
        if (input.url !== undefined) yield* checkUrl(input.url)
        const current = yield* repo.findEndpoint(principal.accountId, id)
        if (current === undefined) return yield* new NotFound({ resource: "webhook endpoint", id })
        const next: EndpointRecord = {
          ...current,
          url: input.url ?? current.url,
          events: input.events ?? current.events,
          description: input.description === undefined ? current.description : input.description,
          retry_policy: input.retry_policy ?? current.retry_policy,
          enabled: input.enabled ?? current.enabled
        }
        const updated = yield* repo.updateEndpoint(next, yield* Ids.now)
        return updated === undefined ? yield* new NotFound({ resource: "webhook endpoint", id }) : publicView(updated)
      }, Tracing.span("Webhooks.update"))

      const remove = Effect.fnUntraced(function* (id: string) {
        const principal = yield* manage
        if (!(yield* repo.deleteEndpoint(principal.accountId, id, yield* Ids.now))) {
          return yield* new NotFound({ resource: "webhook endpoint", id })
        }
        return { id, deleted: true as const }
      }, Tracing.span("Webhooks.remove"))

      const listDeliveries = Effect.fnUntraced(function* (filter: DeliveryFilter, page: Pagination.Page) {
        const principal = yield* manage
        const slice = yield* repo.listDeliveries(principal.accountId, filter, page)
        return { deliveries: slice.items, meta: Pagination.meta(page, slice.total) }
      }, Tracing.span("Webhooks.listDeliveries"))

      const redeliver = Effect.fnUntraced(function* (id: string) {
        const principal = yield* manage
        const result = yield* repo.redeliver(principal.accountId, id, yield* Ids.now)
        if (result === undefined) return yield* new NotFound({ resource: "delivery", id })
        if (result === "gone") return yield* new Conflict({ message: "The endpoint of this delivery was deleted" })
        return result
      }, Tracing.span("Webhooks.redeliver"))

      const decodeRotation = decodeInput(RotateSecret, "rotation")
      const decodeRecovery = decodeInput(RecoverDeliveries, "recovery")

      // The old secret keeps signing (beside the new one) until the overlap ends; a second rotation
      // within it retires the first secret at once, as only the latest previous one is kept.
      const rotateSecret = Effect.fnUntraced(function* (id: string, raw: RotateSecret) {
        const principal = yield* manage
        const input = yield* decodeRotation(raw)
        const current = yield* repo.findEndpoint(principal.accountId, id)
        if (current === undefined) return yield* new NotFound({ resource: "webhook endpoint", id })
        const overlap = input.overlap_seconds ?? DEFAULT_OVERLAP_SECONDS
        const now = yield* Clock.currentTimeMillis
        const next: EndpointRecord = {
          ...current,
          secret: newSecret(),
          previousSecret: overlap === 0 ? null : current.secret,
          previousSecretExpiresAt: overlap === 0 ? null : new Date(now + overlap * 1000).toISOString()
        }
        const updated = yield* repo.updateEndpoint(next, new Date(now).toISOString())
        if (updated === undefined) return yield* new NotFound({ resource: "webhook endpoint", id })
        return { ...publicView(updated), secret: next.secret, previous_secret_expires_at: next.previousSecretExpiresAt }
      }, Tracing.span("Webhooks.rotateSecret"))

      const recover = Effect.fnUntraced(function* (id: string, raw: RecoverDeliveries) {
        const principal = yield* manage
        const input = yield* decodeRecovery(raw)
        const now = yield* Clock.currentTimeMillis
        const since = Date.parse(input.since)
        if (since > now) {
          const message = "since must not be in the future"
          return yield* new InvalidInput({ message, details: [{ path: "since", message }] })
        }
        const requeued = yield* repo.recover(
          principal.accountId,
          id,
          new Date(since).toISOString(),
          new Date(now).toISOString()
        )
        if (requeued === undefined) return yield* new NotFound({ resource: "webhook endpoint", id })
        return { requeued }
      }, Tracing.span("Webhooks.recover"))

      return Webhooks.of({
        register,
        listEndpoints,
        update,
        remove,
        listDeliveries,
        redeliver,
        rotateSecret,
        recover
      })
    })
  )
}
