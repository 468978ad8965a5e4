import { expect } from "vitest"
import { nextPhone } from "../Fixtures.ts"
import { call } from "../Http.ts"
import { listAll, neverIssued } from "../internal/wire.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

/** The fields of a lead on the wire, sorted (docs/contract.md). */
export const LEAD_KEYS = [
  "assigned_user_id",
  "attributes",
  "created_at",
  "email",
  "id",
  "marketing_opt_out",
  "name",
  "phone",
  "status",
  "tags",
  "updated_at"
]

export interface CreatedLead {
  readonly id: string
  readonly phone: string
  readonly updated_at: string
  readonly [field: string]: unknown
}

/** POST /api/v1/leads with a fresh phone unless `body` gives one; the reply, whatever it is. */
export const postLead = (
  target: Target,
  key: string,
  body: Record<string, unknown> = {},
  headers?: Record<string, string>
) =>
  call(target, "POST", "/api/v1/leads", {
    auth: key,
    json: { name: "Ada Lovelace", phone: nextPhone(), ...body },
    headers
  })

/** Makes a lead with the key (a fresh phone unless given), expecting 201. */
export const createLead = async (
  target: Target,
  key: string,
  fields: Record<string, unknown> = {}
): Promise<CreatedLead> => {
  const reply = await call(target, "POST", "/api/v1/leads", {
    auth: key,
    json: { name: "Ada Lovelace", phone: nextPhone(), ...fields }
  })
  expect(reply.status, reply.text).toBe(201)
  return reply.body
}

/** The lead as its account sees it, expecting 200. */
export const readLead = async (target: Target, key: string, id: string) => {
  const reply = await call(target, "GET", `/api/v1/leads/${id}`, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body
}

/** The fields that differ between a thing after a change and before it, `updated_at` aside; every field when before is unknown. */
export const changedFields = (after: Record<string, unknown>, before: Record<string, unknown> | undefined) =>
  Object.keys(after).filter(
    (field) =>
      field !== "updated_at" && (before === undefined || JSON.stringify(after[field]) !== JSON.stringify(before[field]))
  )

/** An id of a lead's shape that was never issued. */
export const unknownLeadId = () => neverIssued("ld")

const isolation: Resource.Isolation = {
  noun: "lead",
  make: async ({ target }, key) => (await createLead(target, key)).id,
  read: ({ target }, key, id) => readLead(target, key, id),
  unknownId: unknownLeadId
}

const at = (id: string) => ({ path: `/api/v1/leads/${id}` })

export const resource: Resource.Resource = {
  name: "leads",
  routes: [
    {
      method: "GET",
      path: "/api/v1/leads",
      needs: ["leads:read", "leads:write"],
      succeeds: 200,
      lists: "leads",
      request: async () => ({ path: "/api/v1/leads" })
    },
    {
      method: "POST",
      path: "/api/v1/leads",
      needs: ["leads:write"],
      succeeds: 201,
      request: async ({ target }, account) => {
        const phone = nextPhone()
        return {
          path: "/api/v1/leads",
          json: { name: "Grace Hopper", phone },
          unchanged: async () => {
            const leads = await listAll(target, account.ownerKey, "/api/v1/leads", "leads")
            expect(leads.map((lead: { phone: string }) => lead.phone)).not.toContain(phone)
          }
        }
      }
    },
    {
      method: "GET",
      path: "/api/v1/leads/{id}",
      needs: ["leads:read", "leads:write"],
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    },
    {
      method: "PATCH",
      path: "/api/v1/leads/{id}",
      needs: ["leads:write"],
      succeeds: 200,
      addresses: (id) => ({ ...at(id), json: { status: "lost", name: "Taken over", tags: ["pwned"] } }),
      request: Resource.aimedAt(isolation, (id) => ({ ...at(id), json: { status: "lost", name: "Changed" } }))
    },
    {
      method: "DELETE",
      path: "/api/v1/leads/{id}",
      needs: ["leads:write"],
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    }
  ],
  isolation,
  ledger: {
    tables: [
      {
        name: "leads",
        account: "account_id",
        rows: Resource.perOperation({ "POST /api/v1/leads": 1, "DELETE /api/v1/leads/{id}": -1 })
      },
      {
        name: "lead_counts",
        account: "account_id",
        rows: Resource.uncounted(
          "one row per account that has ever had a lead (meta.total), made by its first create: an answer does not say whether it was the account's first"
        )
      }
    ],
    ids: {
      field: "id",
      create: "POST /api/v1/leads",
      update: "PATCH /api/v1/leads/{id}",
      remove: "DELETE /api/v1/leads/{id}",
      list: { path: "/api/v1/leads", field: "leads" },
      parameters: ["/api/v1/leads/{id} id"]
    },
    emits: {
      "POST /api/v1/leads": "lead.created",
      // A PATCH that changes nothing (every field as it was) emits nothing.
      "PATCH /api/v1/leads/{id}": (after, before) => (changedFields(after, before).length > 0 ? ["lead.updated"] : []),
      "DELETE /api/v1/leads/{id}": "lead.deleted"
    }
  }
}
