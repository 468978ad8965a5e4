import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Agent, CreateAgent, DeletedAgent, UpdateAgent } from "@leadline/core/agents/Agent"
import { Meta, PageQueryFields } from "@leadline/core/Pagination"
import { Id } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import * as Idempotent from "../Idempotent.ts"
import { IfMatchHeaders } from "../Preconditions.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Conflict, Forbidden, NotFound, PreconditionFailed, ValidationError } from "../WireErrors.ts"

export const AgentList = Schema.Struct({ agents: Schema.Array(Agent), meta: Meta }).annotate({
  identifier: "AgentList"
})

const AgentId = { id: Id.annotate({ description: "An agent id, `agt_…`" }) }
const ETAG = 'Answers with `ETag: "<version>"`.'
const EVENT = "Emits `agent.config_changed`."

export class AgentsApi extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.get("list", "/", {
      query: PageQueryFields,
      success: AgentList,
      error: [Forbidden, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({ summary: "List agents", description: "Newest first. Needs `agents:read`." })
    ),
    Idempotent.create("create", "/", {
      payload: CreateAgent,
      success: Agent,
      error: [Forbidden, ValidationError, Conflict]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Create an agent",
        description: `Only \`name\` is required; the rest default as in the contract (disabled, on WhatsApp, temperature 0.3, 400 output tokens, 4 snippets, hand-off on no knowledge). The name is unique in the account and at most one agent is enabled per channel (409 \`conflict\`); \`knowledge_source_ids\` must be sources of the account (400). ${ETAG} ${EVENT} Needs \`agents:write\`.`
      })
    ),
    HttpApiEndpoint.get("get", "/:id", { params: AgentId, success: Agent, error: [Forbidden, NotFound] }).annotateMerge(
      OpenApi.annotations({ summary: "Get an agent", description: `${ETAG} Needs \`agents:read\`.` })
    ),
    HttpApiEndpoint.patch("update", "/:id", {
      params: AgentId,
      headers: IfMatchHeaders,
      payload: UpdateAgent,
      success: Agent,
      error: [Forbidden, NotFound, ValidationError, Conflict, PreconditionFailed]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Change an agent",
        description: `Any field of the create; \`handoff\` merges field by field. With \`If-Match\`, only if the agent is still at that version (412 otherwise). A change moves \`version\` by one and emits \`agent.config_changed\` with \`previous_attributes\`; a PATCH that changes nothing keeps both. ${ETAG} Needs \`agents:write\`.`
      })
    ),
    HttpApiEndpoint.delete("delete", "/:id", {
      params: AgentId,
      success: DeletedAgent,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Delete an agent",
        description: `${EVENT} (with \`deleted: true\`) Needs a full-access key: no scope grants deleting an agent.`
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/agents")
  .annotateMerge(
    OpenApi.annotations({
      title: "Agents",
      description: "AI agents that answer from the knowledge base (docs/contract-commerce-ai.md §5)."
    })
  ) {}
