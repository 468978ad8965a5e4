import { expect } from "vitest"
import { call } from "../Http.ts"
import { listAll, neverIssued } from "../internal/wire.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

/** The fields of a knowledge source on the wire, sorted (docs/contract-commerce-ai.md §4); a GET adds `content`. */
export const SOURCE_KEYS = [
  "char_count",
  "chunk_count",
  "content_sha256",
  "created_at",
  "embedding_status",
  "error",
  "id",
  "kind",
  "language",
  "status",
  "title",
  "updated_at",
  "url"
]

export const PATH = "/api/v1/knowledge/sources"

export const sourceBody = (fields: Record<string, unknown> = {}) => ({
  kind: "markdown",
  title: `Shipping policy ${crypto.randomUUID().slice(0, 8)}`,
  content: "# Shipping\n\nWe deliver within 2 business days in São Paulo. Delivery is free above R$ 100.",
  ...fields
})

/** POST /api/v1/knowledge/sources, expecting 201. */
export const createSource = async (target: Target, key: string, fields: Record<string, unknown> = {}) => {
  const reply = await call(target, "POST", PATH, { auth: key, json: sourceBody(fields) })
  expect(reply.status, reply.text).toBe(201)
  return reply.body as Record<string, any> & { id: string; title: string; chunk_count: number }
}

export const readSource = async (target: Target, key: string, id: string) => {
  const reply = await call(target, "GET", `${PATH}/${id}`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body as Record<string, any>
}

const isolation: Resource.Isolation = {
  noun: "knowledge source",
  make: async ({ target }, key) => (await createSource(target, key)).id,
  read: ({ target }, key, id) => readSource(target, key, id),
  unknownId: () => neverIssued("ks")
}

const at = (id: string) => ({ path: `${PATH}/${id}` })
const reads = ["knowledge:read", "knowledge:write"] as const
const writes = ["knowledge:write"] as const

export const resource: Resource.Resource = {
  name: "knowledge sources",
  routes: [
    {
      method: "GET",
      path: PATH,
      needs: [...reads],
      succeeds: 200,
      lists: "sources",
      request: async () => ({ path: PATH })
    },
    {
      method: "POST",
      path: PATH,
      needs: [...writes],
      succeeds: 201,
      request: async ({ target }, account) => {
        const body = sourceBody()
        return {
          path: PATH,
          json: body,
          unchanged: async () => {
            const sources = await listAll(target, account.ownerKey, PATH, "sources")
            expect(sources.map((s: { title: string }) => s.title)).not.toContain(body.title)
          }
        }
      }
    },
    {
      method: "GET",
      path: "/api/v1/knowledge/search",
      needs: [...reads],
      succeeds: 200,
      query: "q=delivery",
      request: async () => ({ path: "/api/v1/knowledge/search?q=delivery" })
    },
    {
      method: "GET",
      path: `${PATH}/{id}`,
      needs: [...reads],
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    },
    {
      method: "GET",
      path: `${PATH}/{id}/chunks`,
      needs: [...reads],
      succeeds: 200,
      addresses: (id) => ({ path: `${PATH}/${id}/chunks` }),
      request: Resource.aimedAt(isolation, (id) => ({ path: `${PATH}/${id}/chunks` }))
    },
    {
      method: "POST",
      path: `${PATH}/{id}/refresh`,
      needs: [...writes],
      succeeds: 202,
      addresses: (id) => ({ path: `${PATH}/${id}/refresh` }),
      // A url source (fetched in the background; refused or failed is all the same to a refresh).
      request: async ({ target }, account) => {
        const reply = await call(target, "POST", PATH, {
          auth: account.ownerKey,
          json: { kind: "url", url: `https://example.com/help/${crypto.randomUUID()}` }
        })
        expect(reply.status, reply.text).toBe(201)
        return { path: `${PATH}/${reply.body.id}/refresh` }
      }
    },
    {
      method: "PATCH",
      path: `${PATH}/{id}`,
      needs: [...writes],
      succeeds: 200,
      addresses: (id) => ({ ...at(id), json: { title: "Renamed" } }),
      request: Resource.aimedAt(isolation, (id) => ({ ...at(id), json: { title: "Shipping, renamed" } }))
    },
    {
      method: "DELETE",
      path: `${PATH}/{id}`,
      needs: [...writes],
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    }
  ],
  isolation,
  ledger: {
    tables: [
      {
        name: "knowledge_sources",
        account: "account_id",
        rows: Resource.perOperation({ [`POST ${PATH}`]: 1, [`DELETE ${PATH}/{id}`]: -1 })
      },
      {
        name: "knowledge_chunks",
        account: "account_id",
        rows: Resource.uncounted("as many per source as its content makes; the knowledge tests count them")
      }
    ],
    ids: {
      field: "id",
      create: `POST ${PATH}`,
      update: `PATCH ${PATH}/{id}`,
      remove: `DELETE ${PATH}/{id}`,
      list: { path: PATH, field: "sources" },
      parameters: [`${PATH}/{id} id`, `${PATH}/{id}/chunks id`, `${PATH}/{id}/refresh id`]
    },
    emits: {
      [`POST ${PATH}`]: "knowledge.updated",
      [`DELETE ${PATH}/{id}`]: "knowledge.updated",
      // A PATCH that changes nothing emits nothing.
      [`PATCH ${PATH}/{id}`]: (after, before) =>
        before !== undefined && (after.title !== before.title || after.content_sha256 !== before.content_sha256)
          ? ["knowledge.updated"]
          : []
    }
  }
}
