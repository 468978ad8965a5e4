import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type { GraphTemplate } from "@leadline/core/templates/Template"
import {
  type BusinessAccount,
  type NewGraphTemplate,
  TemplateGraph,
  TemplateGraphError
} from "@leadline/core/templates/TemplateGraph"
import { Effect, Layer, Redacted } from "effect"
import { HttpClient, type HttpClientRequest as Request, HttpClientRequest } from "effect/http"
import * as CloudTransport from "./CloudTransport.ts"
import * as GraphErrors from "./GraphErrors.ts"

/**
 * `TemplateGraph` over the WhatsApp Cloud API (docs/contract-messaging.md §8.7): a WABA's
 * `message_templates` edge, listed page by page, created and deleted. Same base URL, version and
 * timeout as the message transport (`WHATSAPP_API_BASE_URL`, `WHATSAPP_API_VERSION`,
 * `WHATSAPP_SEND_TIMEOUT_SECONDS`).
 */

/** The fields Leadline keeps, asked for by name (Graph answers only `id`, `name`… otherwise). */
export const FIELDS = "name,language,status,category,components,quality_score,rejected_reason,id"

/** Meta's page size for templates (its maximum is far higher; small pages keep each answer quick). */
export const PAGE_SIZE = 100

/** At most this many pages per WABA: 100,000 templates, well past Meta's per-WABA limit. */
const MAX_PAGES = 1000

const trimSlashes = (value: string) => value.replace(/^\/+|\/+$/g, "")

/** `{base}/{version}/{waba_id}/message_templates` */
export const templatesUrl = (options: CloudTransport.Options, businessAccountId: string): string =>
  `${options.baseUrl.replace(/\/+$/, "")}/${trimSlashes(options.version)}/${encodeURIComponent(businessAccountId)}/message_templates`

/** The body Meta documents for a create. */
export const createBody = (template: NewGraphTemplate): Record<string, unknown> => ({
  name: template.name,
  language: template.language,
  category: template.category,
  components: template.components
})

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const str = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null)

/** One entry of Meta's list, or undefined when it lacks what a template needs. */
export const readTemplate = (item: unknown): GraphTemplate | undefined => {
  if (!isRecord(item)) return undefined
  const id = str(item.id) ?? (typeof item.id === "number" ? String(item.id) : null)
  const name = str(item.name)
  const language = str(item.language)
  if (id === null || name === null || language === null) return undefined
  const quality = isRecord(item.quality_score) ? str(item.quality_score.score) : null
  const reason = str(item.rejected_reason)
  return {
    externalId: id,
    name,
    language,
    category: str(item.category) ?? "UNKNOWN",
    status: str(item.status) ?? "UNKNOWN",
    quality: quality ?? "UNKNOWN",
    // Meta answers "NONE" for a template that was never rejected.
    rejectedReason: reason === null || reason === "NONE" ? null : reason,
    components: Array.isArray(item.components) ? item.components : []
  }
}

const failure = (message: string, providerCode: number | null = null) =>
  new TemplateGraphError({ message, providerCode })

/** A JSON answer: the parsed 2xx body, or Graph's error. */
export const readAnswer = (status: number, text: string): Effect.Effect<unknown, TemplateGraphError> => {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return Effect.fail(failure(`HTTP ${status} with a body that is not JSON`))
  }
  if (status >= 200 && status < 300 && !(isRecord(body) && isRecord(body.error))) return Effect.succeed(body)
  const error = GraphErrors.parseGraphError(body)
  return Effect.fail(
    error === undefined ? failure(`HTTP ${status} without a Graph error body`) : failure(error.message, error.code)
  )
}

export const make = (
  options: Partial<CloudTransport.Options> = {}
): Effect.Effect<TemplateGraph["Service"], never, HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const settings: CloudTransport.Options = { ...CloudTransport.defaults, ...options }
    const client = yield* HttpClient.HttpClient

    const exchange = (account: BusinessAccount, request: Request.HttpClientRequest) =>
      client.execute(HttpClientRequest.bearerToken(request, Redacted.value(account.accessToken))).pipe(
        Effect.flatMap((response) => Effect.flatMap(response.text, (text) => readAnswer(response.status, text))),
        Effect.mapError((error) =>
          error._tag === "TemplateGraphError" ? error : failure(`the Graph API could not be reached: ${error.message}`)
        ),
        Effect.timeoutOrElse({
          duration: settings.timeoutMillis,
          orElse: () => Effect.fail(failure(`no complete answer within ${settings.timeoutMillis} ms`))
        }),
        Effect.provideService(HttpClient.TracerPropagationEnabled, false)
      )

    const list = Effect.fn("WhatsAppCloud.listTemplates")(function* (account: BusinessAccount) {
      const found: Array<GraphTemplate> = []
      let url: string | null =
        `${templatesUrl(settings, account.businessAccountId)}?fields=${FIELDS}&limit=${PAGE_SIZE}`
      for (let pages = 0; url !== null && pages < MAX_PAGES; pages++) {
        const body: unknown = yield* exchange(account, HttpClientRequest.get(url))
        for (const item of isRecord(body) && Array.isArray(body.data) ? body.data : []) {
          const template = readTemplate(item)
          if (template !== undefined) found.push(template)
        }
        // Meta's `next` is a full URL with the token in it on some versions: rebuild it from the cursor.
        const paging: Record<string, unknown> | undefined =
          isRecord(body) && isRecord(body.paging) ? body.paging : undefined
        const after = isRecord(paging?.cursors) ? str(paging.cursors.after) : null
        url =
          paging?.next !== undefined && after !== null
            ? `${templatesUrl(settings, account.businessAccountId)}?fields=${FIELDS}&limit=${PAGE_SIZE}&after=${encodeURIComponent(after)}`
            : null
      }
      return found
    })

    const create = Effect.fn("WhatsAppCloud.createTemplate")(function* (
      account: BusinessAccount,
      template: NewGraphTemplate
    ) {
      const body = yield* exchange(
        account,
        HttpClientRequest.post(templatesUrl(settings, account.businessAccountId)).pipe(
          HttpClientRequest.bodyText(JSON.stringify(createBody(template)), "application/json")
        )
      )
      const id = isRecord(body) ? (str(body.id) ?? (typeof body.id === "number" ? String(body.id) : null)) : null
      if (id === null) return yield* failure("Meta's answer to the create has no id")
      return {
        externalId: id,
        status: (isRecord(body) ? str(body.status) : null) ?? "PENDING",
        category: (isRecord(body) ? str(body.category) : null) ?? template.category
      }
    })

    const remove = Effect.fn("WhatsAppCloud.deleteTemplate")(function* (
      account: BusinessAccount,
      template: { readonly name: string; readonly externalId: string }
    ) {
      const query = `name=${encodeURIComponent(template.name)}&hsm_id=${encodeURIComponent(template.externalId)}`
      yield* exchange(
        account,
        HttpClientRequest.delete(`${templatesUrl(settings, account.businessAccountId)}?${query}`)
      )
    })

    return TemplateGraph.of({ list, create, remove })
  })

/** The client with its own connection pool, closed with the layer. */
export const layer = (options: Partial<CloudTransport.Options> = {}): Layer.Layer<TemplateGraph> =>
  Layer.effect(TemplateGraph, make(options)).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** `layer` with the transport's settings from the environment. */
export const layerConfig = Layer.unwrap(Effect.map(CloudTransport.config, (options) => layer(options)))
