import { expect } from "vitest"
import { createChannel } from "../channels/ChannelsResource.ts"
import { call } from "../Http.ts"
import { listAll, neverIssued, until } from "../internal/wire.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

export const TEMPLATES_PATH = "/api/v1/templates"

/** The fields of a template on the wire, sorted. */
export const TEMPLATE_KEYS = [
  "business_account_id",
  "category",
  "components",
  "created_at",
  "external_id",
  "id",
  "language",
  "name",
  "quality",
  "rejected_reason",
  "status",
  "updated_at"
]

let wabaCounter = 0
/** A WABA id no other test uses: the simulator keeps each WABA's templates for the whole process. */
export const nextBusinessAccountId = (): string =>
  `9${Date.now()}${String(process.pid % 1000).padStart(3, "0")}${String(++wabaCounter).padStart(4, "0")}`

let nameCounter = 0
export const nextTemplateName = (prefix = "order_update") => `${prefix}_${Date.now().toString(36)}_${++nameCounter}`

/** A channel of a WABA of its own, in the key's account. */
export const createWabaChannel = (target: Target, key: string) =>
  createChannel(target, key, { business_account_id: nextBusinessAccountId() })

/** A UTILITY template with one body parameter. */
export const templateBody = (fields: Record<string, unknown> = {}) => ({
  name: nextTemplateName(),
  language: "en_US",
  category: "UTILITY",
  components: [
    { type: "HEADER", format: "TEXT", text: "Order {{1}}", example: { header_text: ["A-1001"] } },
    { type: "BODY", text: "Hi {{1}}, your order {{2}} is on its way.", example: { body_text: [["Ada", "A-1001"]] } },
    { type: "FOOTER", text: "Reply STOP to opt out" }
  ],
  ...fields
})

export const postTemplate = (target: Target, key: string, fields: Record<string, unknown> = {}) =>
  call(target, "POST", TEMPLATES_PATH, { auth: key, json: templateBody(fields) })

/** Submits a template, expecting 201. */
export const createTemplate = async (target: Target, key: string, fields: Record<string, unknown> = {}) => {
  const reply = await postTemplate(target, key, fields)
  expect(reply.status, reply.text).toBe(201)
  return reply.body as Record<string, any> & {
    id: string
    name: string
    language: string
    status: string
    external_id: string
  }
}

export const readTemplate = async (target: Target, key: string, id: string) => {
  const reply = await call(target, "GET", `${TEMPLATES_PATH}/${id}`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body as Record<string, any>
}

/** The template once Meta's review (the simulator's status webhook) has moved it out of PENDING. */
export const reviewed = (target: Target, key: string, id: string) =>
  until(
    () => readTemplate(target, key, id),
    (template) => template.status !== "PENDING"
  )

const isolation: Resource.Isolation = {
  noun: "template",
  make: async ({ target }, key) => {
    const channel = await createWabaChannel(target, key)
    const made = await createTemplate(target, key, { channel_id: channel.id })
    // Settled, so a read before and after another's attempt sees the same template.
    await reviewed(target, key, made.id)
    return made.id
  },
  read: ({ target }, key, id) => readTemplate(target, key, id),
  unknownId: () => neverIssued("tpl")
}

const at = (id: string) => ({ path: `${TEMPLATES_PATH}/${id}` })
const reads = ["conversations:read", "messages:send"] as const

export const resource: Resource.Resource = {
  name: "templates",
  routes: [
    {
      method: "GET",
      path: TEMPLATES_PATH,
      needs: [...reads],
      succeeds: 200,
      lists: "templates",
      request: async () => ({ path: TEMPLATES_PATH })
    },
    {
      method: "POST",
      path: TEMPLATES_PATH,
      needs: "full access",
      succeeds: 201,
      request: async ({ target }, account) => {
        const channel = await createWabaChannel(target, account.ownerKey)
        const body = templateBody({ channel_id: channel.id })
        return {
          path: TEMPLATES_PATH,
          json: body,
          unchanged: async () => {
            const templates = await listAll(target, account.ownerKey, TEMPLATES_PATH, "templates")
            expect(templates.map((t: { name: string }) => t.name)).not.toContain(body.name)
          }
        }
      }
    },
    {
      method: "POST",
      path: "/api/v1/template-syncs",
      needs: "full access",
      succeeds: 200,
      request: async ({ target }, account) => {
        await createWabaChannel(target, account.ownerKey)
        return { path: "/api/v1/template-syncs" }
      }
    },
    {
      method: "GET",
      path: `${TEMPLATES_PATH}/{id}`,
      needs: [...reads],
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    },
    {
      method: "DELETE",
      path: `${TEMPLATES_PATH}/{id}`,
      needs: "full access",
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    }
  ],
  isolation,
  ledger: {
    tables: [
      {
        name: "message_templates",
        account: "account_id",
        rows: Resource.uncounted(
          "a sync replaces a business account's list with Meta's: its answer gives the new size, not the change"
        )
      },
      {
        name: "template_syncs",
        account: "account_id",
        rows: Resource.uncounted(
          "a sync adds its business account's row the first time only, and the answer does not tell which"
        )
      }
    ],
    ids: {
      field: "id",
      create: "POST /api/v1/templates",
      remove: "DELETE /api/v1/templates/{id}",
      parameters: ["/api/v1/templates/{id} id"]
    }
  }
}
