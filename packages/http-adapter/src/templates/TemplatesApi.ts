import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Meta, PageQueryFields } from "@leadline/core/Pagination"
import { CreateTemplate, MessageTemplate, STATUSES, SyncResult } from "@leadline/core/templates/Template"
import { Id, Text } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import * as Idempotent from "../Idempotent.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Conflict, Forbidden, NotFound, ValidationError, WhatsAppProviderError } from "../WireErrors.ts"

export const TemplateList = Schema.Struct({ templates: Schema.Array(MessageTemplate), meta: Meta }).annotate({
  identifier: "TemplateList"
})

export const DeletedTemplate = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotate({
  identifier: "DeletedTemplate"
})

const TemplateId = { id: Id.annotate({ description: "A template id, `tpl_…`" }) }
const READ = "Needs `conversations:read` or `messages:send`, as channels."

const Status = Text.check(
  Schema.makeFilter(
    (status: string) =>
      (STATUSES as ReadonlyArray<string>).includes(status) || `status must be one of ${STATUSES.join(", ")}`
  )
)

export class TemplatesApi extends HttpApiGroup.make("templates")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/templates", {
      query: {
        ...PageQueryFields,
        status: Schema.optional(Status.annotate({ description: "Only templates in this Meta status" })),
        name: Schema.optional(Text.annotate({ description: "Only this name (its languages)" })),
        business_account_id: Schema.optional(Text.annotate({ description: "Only this WABA's" }))
      },
      success: TemplateList,
      error: [Forbidden, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "List WhatsApp message templates",
        description: `By name, then language, as last synced from Meta or created here. ${READ}`
      })
    ),
    Idempotent.create("create", "/api/v1/templates", {
      payload: CreateTemplate,
      success: MessageTemplate,
      error: [Forbidden, ValidationError, Conflict, WhatsAppProviderError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Submit a template to Meta",
        description:
          "`POST /{waba_id}/message_templates` in the WABA of `channel_id`'s channel (or the only active one): stored with Meta's answer (`PENDING` until Meta's review; its status webhook moves it). 409 `conflict` when the name exists in that language; 502 `whatsapp_provider_error` with Graph's message when Meta refuses. Needs full access."
      })
    ),
    HttpApiEndpoint.post("sync", "/api/v1/template-syncs", {
      success: SyncResult,
      error: [Forbidden, Conflict, WhatsAppProviderError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Sync templates from Meta now",
        description:
          "A sync is an action on the account's lists, outside `/api/v1/templates/` so that no path of it reads as a template id. Each WABA of the account's active channels: Meta's whole list replaces the stored one (the server also does this every `WHATSAPP_TEMPLATES_SYNC_SECONDS`). 409 `conflict` when no active channel names a `business_account_id`. Needs full access."
      })
    ),
    HttpApiEndpoint.get("get", "/api/v1/templates/:id", {
      params: TemplateId,
      success: MessageTemplate,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({ summary: "Get a template", description: READ })),
    HttpApiEndpoint.delete("delete", "/api/v1/templates/:id", {
      params: TemplateId,
      success: DeletedTemplate,
      error: [Forbidden, NotFound, Conflict, WhatsAppProviderError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Delete a template (this language)",
        description: "`DELETE /{waba_id}/message_templates?name=…&hsm_id=…` on Meta, then here. Needs full access."
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .annotateMerge(
    OpenApi.annotations({
      title: "Templates",
      description: "WhatsApp message templates of the account's business accounts (docs/contract-messaging.md §8.7)."
    })
  ) {}
